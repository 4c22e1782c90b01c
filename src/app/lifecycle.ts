import { shutdownSignal } from '../shutdown.ts';
import type { App } from './index.ts';

/** A shutdown that takes longer than this is stuck: say where, and exit anyway. */
const SHUTDOWN_LIMIT_MS = 15_000;

/** Waits for Ctrl-C or SIGTERM, then stops the app's steps in order, each in the log. */
export async function untilSignal(app: App): Promise<number> {
  const { log } = app;
  const signal = await shutdownSignal((again) => log.debug({ signal: again }, 'already stopping'));
  log.info({ signal }, 'stopping: finishing the pages being written');
  let step = '';
  const watchdog = setTimeout(() => {
    log.error({ step, limitMs: SHUTDOWN_LIMIT_MS }, 'shutdown is stuck; exiting anyway');
    // A log transport writes from another thread: give it a moment to write this line before the process ends.
    setTimeout(() => process.exit(1), 200);
  }, SHUTDOWN_LIMIT_MS);
  watchdog.unref();
  await app.stop((name) => (step = name));
  clearTimeout(watchdog);
  log.info('stopped');
  return 0;
}
