/**
 * Resolves on the first Ctrl-C or SIGTERM, and keeps handling the ones that follow: a terminal signals the whole
 * process group and npm relays the signal to its child as well, so one Ctrl-C arrives twice.
 * A later signal with no handler would end the process halfway through its shutdown.
 */
export function shutdownSignal(onRepeat?: (signal: NodeJS.Signals) => void): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    let first: NodeJS.Signals | undefined;
    const on = (signal: NodeJS.Signals) => {
      if (first) return onRepeat?.(signal);
      first = signal;
      resolve(signal);
    };
    process.on('SIGINT', on);
    process.on('SIGTERM', on);
  });
}
