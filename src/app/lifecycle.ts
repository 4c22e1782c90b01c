import { shutdownSignal } from '../shutdown.ts';
import type { App } from './index.ts';

/** A process forced to end exits with this, or with 128 + the signal's number when a second signal ended it. */
const FORCED_EXIT = 1;
const SIGNAL_NUMBERS: Partial<Record<NodeJS.Signals, number>> = { SIGINT: 2, SIGTERM: 15 };

/**
 * Ctrl-C and SIGTERM for the whole life of a command. The first stops the app's steps in order, within
 * WFS_SHUTDOWN_MS: the pages being written are finished, the runs record their end, the connections close. What
 * is not done by then is left as a crash leaves it (a page in flight is read again from its checkpoint) and the
 * process ends, saying in one line what was still running. A second signal sent on purpose ends it at once
 * (shutdown.ts tells it from the copy of the first that a terminal and npm deliver together).
 */
export class Shutdown {
  readonly #app: App;
  readonly #abort = new AbortController();
  /** When the process must have stopped, once a signal came. */
  #deadline?: number;
  /** Resolves with the first signal. */
  readonly requested: Promise<NodeJS.Signals>;

  constructor(app: App) {
    this.#app = app;
    this.requested = shutdownSignal((again) => this.#force(`${again} again`, 128 + (SIGNAL_NUMBERS[again] ?? 0)));
    void this.requested.then((signal) => this.#begin(signal));
  }

  /** Aborted at the first signal: runs stop after the page they are writing. */
  get signal(): AbortSignal {
    return this.#abort.signal;
  }

  #begin(signal: NodeJS.Signals): void {
    const { log, config } = this.#app;
    this.#deadline = Date.now() + config.shutdownMs;
    log.info({ signal, limitMs: config.shutdownMs }, 'stopping: finishing the pages being written');
    this.#abort.abort(new Error(`${signal}: shutting down`));
    // The steps are held to the deadline (App.stop); this covers what runs before them, or never yields to them.
    setTimeout(
      () => this.#force(`not stopped within ${config.shutdownMs / 1000} s`, FORCED_EXIT),
      config.shutdownMs + 500,
    ).unref();
  }

  /** Stops the app's steps, by the deadline once a signal came. 0 when every step stopped in time. */
  async stop(): Promise<number> {
    await this.#app.stop({ deadline: this.#deadline });
    const late = this.#app.stillRunning();
    if (late.length > 0) this.#force('not stopped in time', FORCED_EXIT);
    if (this.#deadline !== undefined) this.#app.log.info('stopped');
    return 0;
  }

  /** Ends the process now, naming in one line what was still running. */
  #force(why: string, code: number): never {
    const running = this.#app.stillRunning();
    this.#app.log.fatal(
      { stillRunning: running },
      `${why}: exiting with ${running.length ? running.join(', ') : 'nothing named'} still running`,
    );
    return process.exit(code);
  }
}

/** Waits for Ctrl-C or SIGTERM, then stops the app's steps in order, each in the log. */
export async function untilSignal(app: App, shutdown = new Shutdown(app)): Promise<number> {
  await shutdown.requested;
  return shutdown.stop();
}
