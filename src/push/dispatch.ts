import { createHash } from 'node:crypto';
import type { EventEmitter } from 'node:events';
import type { Queue, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from '../log.ts';
import { entityKey, type Entity } from './entity.ts';
import type { PushSettings } from './options.ts';
import { closeRedis, REDIS_GOODBYE_MS, settlesWithin } from '../redis-health.ts';

/**
 * Where the entities a sweep found are worked on: in this process, or on the BullMQ `push` queue (ids only,
 * never a payload) for the BullMQ workers of every process to take.
 */

export const PUSH_QUEUE = 'push';

export interface Dispatcher {
  start(): Promise<void>;
  /** Takes the entities the last sweep found runnable. */
  offer(found: readonly Entity[]): Promise<void>;
  /** The entities in hand, for a stop to wait for. */
  inHand(): Promise<unknown>;
  close(): Promise<void>;
}

export interface DispatchHooks {
  /** Works one entity (under its lock) until nothing of it may run. */
  work(e: Entity): Promise<void>;
  stopped(): boolean;
  /** Asks for a sweep. */
  sweep(): void;
}

export function dispatcherFor(s: PushSettings, log: Logger, hooks: DispatchHooks): Dispatcher {
  return s.redis ? new QueueDispatcher(s, s.redis, log, hooks) : new InProcessDispatcher(s.concurrency, log, hooks);
}

/** Works at most `concurrency` entities at once; the rest of a sweep's finds start as others finish. */
class InProcessDispatcher implements Dispatcher {
  readonly #inFlight = new Set<string>();
  readonly #running = new Set<Promise<void>>();
  /** Runnable entities the last sweep found beyond the concurrency: launched as others finish, without a sweep each. */
  #backlog: Entity[] = [];

  constructor(
    private readonly concurrency: number,
    private readonly log: Logger,
    private readonly hooks: DispatchHooks,
  ) {}

  async start(): Promise<void> {}

  async offer(found: readonly Entity[]): Promise<void> {
    this.#backlog = found.filter((e) => !this.#inFlight.has(entityKey(e)));
    this.#fill();
  }

  inHand(): Promise<unknown> {
    return Promise.allSettled(this.#running);
  }

  async close(): Promise<void> {}

  #fill(): void {
    while (this.#backlog.length > 0 && this.#inFlight.size < this.concurrency && !this.hooks.stopped())
      this.#launch(this.#backlog.shift()!);
  }

  #launch(e: Entity): void {
    const key = entityKey(e);
    if (this.#inFlight.has(key) || this.#inFlight.size >= this.concurrency || this.hooks.stopped()) return;
    this.#inFlight.add(key);
    const p = this.hooks
      .work(e)
      .catch((err: unknown) =>
        this.log.error(
          { company: e.company, err: err instanceof Error ? err.message : String(err) },
          'push work failed',
        ),
      )
      .finally(() => {
        this.#inFlight.delete(key);
        this.#running.delete(p);
        if (this.hooks.stopped()) return;
        // A stale entry costs one read under its lock (nothing due: nothing done); a sweep reads the whole outbox.
        if (this.#backlog.length > 0) this.#fill();
        else this.hooks.sweep();
      });
    this.#running.add(p);
  }
}

/** Puts each entity on the `push` queue once (its job id is the entity's) and works the queue's jobs. */
class QueueDispatcher implements Dispatcher {
  #queue: Queue<Entity> | undefined;
  #worker: Worker<Entity> | undefined;
  #workerConnection: Redis | undefined;

  constructor(
    private readonly settings: Pick<PushSettings, 'prefix' | 'concurrency' | 'health'>,
    private readonly redis: Redis,
    private readonly log: Logger,
    private readonly hooks: DispatchHooks,
  ) {}

  async start(): Promise<void> {
    const prefix = this.settings.prefix ? { prefix: this.settings.prefix } : {};
    // Loaded here: a process without Redis does not carry bullmq.
    const { Queue, Worker } = await import('bullmq');
    const queue = new Queue<Entity>(PUSH_QUEUE, { connection: this.redis, ...prefix });
    const connection = this.redis.duplicate();
    const worker = new Worker<Entity>(PUSH_QUEUE, async (job) => this.hooks.work(job.data), {
      connection,
      concurrency: this.settings.concurrency,
      ...prefix,
    });
    worker.on('failed', (_job, err) => this.log.error({ err: err.message }, 'push job failed'));
    for (const source of [queue, worker, connection] as EventEmitter[]) {
      if (this.settings.health) this.settings.health.watch(source);
      else source.on('error', (err: Error) => this.log.warn({ err: err.message }, 'push queue connection error'));
    }
    this.#queue = queue;
    this.#worker = worker;
    this.#workerConnection = connection;
  }

  async offer(found: readonly Entity[]): Promise<void> {
    const queue = this.#queue;
    if (!queue) return;
    await Promise.all(
      found.map((e) => queue.add('entity', e, { jobId: jobIdOf(e), removeOnComplete: true, removeOnFail: true })),
    );
  }

  /** The worker's close waits for its jobs. */
  async inHand(): Promise<unknown> {
    return undefined;
  }

  async close(): Promise<void> {
    // A Redis that is gone never answers: after a while the connections are cut, and a job in hand goes back to
    // the queue when its lock expires.
    const worker = this.#worker;
    // Forced, BullMQ does not wait for the job's last words to a Redis that is gone, and stops its timers.
    const gone = !!this.settings.health?.down || this.redis.status !== 'ready';
    if (!(await settlesWithin(Promise.all([worker?.close(gone), this.#queue?.close()]), REDIS_GOODBYE_MS)))
      void worker?.disconnect().catch(() => undefined);
    if (this.#workerConnection) await closeRedis(this.#workerConnection);
    this.#worker = undefined;
    this.#queue = undefined;
    this.#workerConnection = undefined;
  }
}

/** One job id per entity, so an entity is on the queue once at a time; hashed, as BullMQ refuses an id with a colon. */
const jobIdOf = (e: Entity) => `p${createHash('sha1').update(entityKey(e)).digest('hex')}`;
