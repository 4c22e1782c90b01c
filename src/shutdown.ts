/**
 * A signal this soon after the first is the first one again. A terminal signals the whole process group and npm
 * relays the signal to its child as well, so one Ctrl-C arrives twice, milliseconds apart; a person who means a
 * second Ctrl-C, or an orchestrator that escalates, sends it later than this.
 */
export const REPEAT_AFTER_MS = 1_000;

/**
 * Resolves on the first Ctrl-C or SIGTERM, and keeps handling the ones that follow: a signal with no handler
 * would end the process halfway through its shutdown. `onRepeat` hears a signal sent on purpose after the first
 * (more than REPEAT_AFTER_MS later); the copies of the first one are ignored.
 */
export function shutdownSignal(onRepeat?: (signal: NodeJS.Signals) => void): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    let first: { signal: NodeJS.Signals; at: number } | undefined;
    const on = (signal: NodeJS.Signals) => {
      if (!first) {
        first = { signal, at: Date.now() };
        return resolve(signal);
      }
      if (Date.now() - first.at > REPEAT_AFTER_MS) onRepeat?.(signal);
    };
    process.on('SIGINT', on);
    process.on('SIGTERM', on);
  });
}
