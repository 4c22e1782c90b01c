import type { Logger } from '../log.ts';
import { dispatcherFor, type Dispatcher } from './dispatch.ts';
import { EntityWorker, VERIFICATIONS, type Entity } from './entity.ts';
import { settingsOf, type PushRunnerOptions, type PushSettings } from './options.ts';
import { PUSH_CHANNEL, runnableChanges } from './outbox.ts';
import { notifyWebhook } from './webhook.ts';

/**
 * The push worker. Postgres decides what may run: per company, the first open change of each entity (a
 * credential also waits for its holder's open changes), and verification results as one batch. Each pass of
 * its loop is named steps: a sweep finds the runnable entities, the dispatcher hands each to a worker
 * (src/push/dispatch.ts), which claims the entity under its advisory lock and sends and settles its changes
 * (src/push/entity.ts); then the webhook is told of final states (src/push/webhook.ts). A sweep runs on every
 * notification of a queued change, every `sweepMs`, and when an in-process worker runs out of work.
 */
export class PushRunner {
  readonly #settings: PushSettings;
  readonly #log: Logger;
  readonly #entities: EntityWorker;
  readonly #dispatcher: Dispatcher;
  #stopped = false;
  #sweepTimer: NodeJS.Timeout | undefined;
  #unlisten: (() => Promise<void>) | undefined;
  #sweeping: Promise<void> | undefined;
  /** A sweep was asked for while one ran: it runs again once that one is done. */
  #again = false;

  constructor(options: PushRunnerOptions) {
    this.#settings = settingsOf(options);
    this.#log = options.log.child({ component: 'push' });
    this.#entities = new EntityWorker(this.#settings, this.#log);
    this.#dispatcher = dispatcherFor(this.#settings, this.#log, {
      work: (e) => this.#work(e),
      stopped: () => this.#stopped,
      sweep: () => this.#kick(),
    });
  }

  async start(): Promise<void> {
    this.#stopped = false;
    await this.#dispatcher.start();
    const listener = await this.#settings.warehouse.sql.listen(PUSH_CHANNEL, () => this.#kick());
    this.#unlisten = () => listener.unlisten();
    this.#sweepTimer = setInterval(() => this.#kick(), this.#settings.sweepMs);
    this.#kick();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#sweepTimer) clearInterval(this.#sweepTimer);
    // Ctrl-C on a terminal stops the embedded Postgres too: what cannot finish in time is left as a crash would
    // leave it (a change still `sending` is settled by a lookup at the next start).
    await atMost(
      STOP_WAIT_MS,
      this.#unlisten?.().catch(() => undefined),
    );
    await atMost(STOP_WAIT_MS, Promise.allSettled([this.#sweeping, this.#dispatcher.inHand()]));
    await this.#dispatcher.close();
  }

  /** Sweeps now, or once more after the sweep under way. */
  #kick(): void {
    if (this.#stopped) return;
    if (this.#sweeping) {
      this.#again = true;
      return;
    }
    this.#sweeping = this.#sweep()
      .catch((err: unknown) =>
        this.#log.error({ err: err instanceof Error ? err.message : String(err) }, 'push sweep failed'),
      )
      .finally(() => {
        this.#sweeping = undefined;
        if (this.#again) {
          this.#again = false;
          this.#kick();
        }
      });
  }

  /** Finds what may run and dispatches it, then tells the webhook of final states. */
  async #sweep(): Promise<void> {
    const { warehouse: wh, clients, webhook } = this.#settings;
    const found = (await runnableChanges(wh.sql, wh))
      .filter((r) => clients.has(r.company_key))
      .map(
        (r): Entity => ({ company: r.company_key, entity: r.kind === 'verification' ? VERIFICATIONS : r.entity_key }),
      );
    await this.#dispatcher.offer(found);
    if (webhook) await notifyWebhook(wh, webhook);
  }

  async #work(e: Entity): Promise<void> {
    const client = this.#settings.clients.get(e.company);
    if (client) await this.#entities.work(e, client, () => this.#stopped);
  }
}

/** Makes a runner; its options are checked here, once (a bad one throws a ConfigError naming it). */
export function createPushRunner(options: PushRunnerOptions): PushRunner {
  return new PushRunner(options);
}

/** How long stop() waits for the listener and the changes in hand; with the warehouse's own 5 s to close, a stop stays well inside the 15 s a shutdown may take. */
const STOP_WAIT_MS = 2_000;

function atMost(ms: number, p: Promise<unknown> | undefined): Promise<unknown> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise((resolve) => (timer = setTimeout(resolve, ms)));
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}
