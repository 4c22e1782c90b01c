import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { jobs } from '../../jobs/index.ts';
import { defaultConcurrency, type Config } from '../config.ts';
import type { Logger } from '../log.ts';
import { Observers } from '../observers.ts';
import type { ScheduleOptions } from '../queue/schedules.ts';
import { LiveFigures } from '../ops/live.ts';
import { Metrics, type QueueCounts } from '../ops/metrics.ts';
// The HTTP side (hono, bull-board) loads only in a process that serves it: a scheduler starts without it.
import type { MountedApp, OpsActions, OpsServer } from '../ops/server.ts';
import { outboxCounts, readStatus } from '../ops/status.ts';
import type { CompanyAdmin } from '../ops/company-admin.ts';
import { createSealer, lazySealer, secretKeyOf } from '../warehouse/secret.ts';
import { stderrConsole, type Console } from '../console.ts';
import { createInProcessRunner, type InProcessRunner } from '../queue/in-process.ts';
import { startScheduler, type Dispatch, type FiringOrder, type Scheduler } from '../queue/scheduler.ts';
import type { SyncJobData } from '../queue/sync-queue.ts';
import type { SyncWorker } from '../queue/worker.ts';
import { REDIS_GOODBYE_MS, redisHealth, settlesWithin, type RedisHealth } from '../redis-health.ts';
import { ProgressBoard } from '../ops/progress-board.ts';
import type { Warehouse } from '../warehouse/connection.ts';
import { BUILT_IN_SANDBOX, openEnvironment, type Environment } from './environment.ts';
import { openMigratedWarehouse } from '../warehouse/configured.ts';
import { personalCatalog } from '../resources/index.ts';
import { listCompanies } from '../warehouse/company-records.ts';
import { markInterruptedRuns, runEndsRecorded } from '../warehouse/runs.ts';
import type { ResyncVia } from '../warehouse/resyncs.ts';
import type { StreamName } from '../resources/index.ts';
import type { JobDef } from '../queue/job.ts';
import { audited, type Actor } from '../warehouse/audit.ts';

/** Work that runs beside the sync jobs for as long as the process does (the push runner). */
export interface Runner {
  name: string;
  start(): Promise<void> | void;
  /** Ends after the work in hand; resolves when it has. */
  stop(): Promise<void> | void;
}

/** The sync queue's module, and bullmq and ioredis with it: loaded on first use, so a process without Redis does not carry them. */
const queueModule = () => import('../queue/sync-queue.ts');
type QueueModule = Awaited<ReturnType<typeof queueModule>>;

/** How long one step may take to stop before the next one goes, when the stop has no deadline (lifecycle.ts gives one). */
const STEP_LIMIT_MS = 8_000;

/** Closes a queue on the process's connection; a Redis that does not answer does not hold the stop (the connection is cut after). */
async function closeQueue(queue: Queue): Promise<void> {
  await settlesWithin(queue.close(), REDIS_GOODBYE_MS);
}

/** A part of the process to stop, named for the shutdown log. */
interface Stop {
  name: string;
  stop: () => Promise<void> | void;
}

/**
 * The one composition root: config → warehouse → limiter → clients → runners → HTTP server, each a step a
 * command asks for. Every step registers how it stops, and `stop()` stops them in the reverse order.
 *
 * Other modules plug in through `runners` (started by `startRunners`), `apps` (served under their path by the
 * ops server), `boardQueues` (shown on /queues) and `actions` (the dashboard's buttons).
 */
export class App {
  readonly observers = new Observers();
  readonly metrics: Metrics;
  readonly live = new LiveFigures();
  readonly runners: Runner[] = [];
  readonly apps: MountedApp[] = [];
  /** Queues bull-board shows besides `sync`. */
  readonly boardQueues: Queue[] = [];
  readonly actions: OpsActions = {};
  readonly #stops: Stop[] = [];
  /** The steps stopping now. */
  readonly #stopping = new Set<string>();
  #env?: Environment;
  /** The companies table's keys, for a process that serves without syncing (read every refresh interval). */
  #listed?: string[];
  #warehouse?: Warehouse;
  #redis?: Promise<Redis>;
  /** The sync queue once made, for /metrics. */
  #queue?: Queue<SyncJobData>;
  /** Its counts for /metrics: BullMQ's, and the runs queued and not yet given to a worker. */
  #queueCounts?: QueueCounts;
  #queueMade?: Promise<Queue<SyncJobData>>;
  #runner?: InProcessRunner;
  #enqueue?: Promise<Dispatch>;

  constructor(
    readonly config: Config,
    readonly log: Logger,
    readonly console: Console = stderrConsole,
  ) {
    this.metrics = new Metrics({
      queues: () => (this.#queueCounts ? [this.#queueCounts, ...this.boardQueues] : this.boardQueues),
      outbox: () => (this.#warehouse ? outboxCounts(this.#warehouse) : Promise.resolve({})),
      scheduleDelay: () => this.scheduleDelay(),
    });
    this.metrics.listen(this.observers);
    this.live.listen(this.observers);
  }

  /** How long the oldest queued run has waited, in seconds: null when none waits or there is no queue (yet). */
  async scheduleDelay(): Promise<number | null> {
    if (!this.#queue) return null;
    const { scheduleDelaySeconds } = await queueModule();
    return scheduleDelaySeconds(await this.redis());
  }

  /** Registers how to undo a step; steps stop in the reverse order they started. */
  onStop(name: string, stop: () => Promise<void> | void): void {
    this.#stops.push({ name, stop });
  }

  /** Every company, paused or not: the companies table's as of its last refresh in a process that syncs, else the settings'. */
  get companies(): string[] {
    if (this.#env) return this.#env.companies.keys();
    const configured = this.config.companies.map((c) => c.key);
    return [...new Set([...configured, ...(this.#listed ?? [])])];
  }

  get schedule(): ScheduleOptions {
    return { jobs, cronOverrides: this.config.cron, timezone: this.config.timezone };
  }

  /** The warehouse, limiter and clients (and the built-in sandbox when there is no WFS_BASE_URL). */
  async environment(): Promise<Environment> {
    if (this.#env) return this.#env;
    const env = await openEnvironment(this.config, this.log, this.observers);
    this.#env = env;
    this.#warehouse = env.warehouse;
    this.onStop('environment', env.close);
    await this.#opened(env.warehouse);
    return env;
  }

  /** The warehouse alone, migrated (serve, status, migrate). */
  async warehouse(): Promise<Warehouse> {
    if (this.#warehouse) return this.#warehouse;
    const wh = await openMigratedWarehouse(this.config, this.log, personalCatalog);
    this.#warehouse = wh;
    this.onStop('warehouse', () => wh.close());
    await this.#opened(wh);
    return wh;
  }

  /**
   * A process that ended before it could record its runs' end (killed, or cut off by its shutdown bound) left
   * them open: the next process to start records them interrupted. Then the metrics learn each stream's last success.
   */
  async #opened(wh: Warehouse): Promise<void> {
    await markInterruptedRuns(wh).catch((err: unknown) =>
      this.log.warn({ err }, 'could not look for runs interrupted by a process that ended'),
    );
    // A stream turned off has no freshness to watch.
    this.metrics.seedLastSuccess(
      (await readStatus(wh, { companies: this.companies, schedule: this.schedule })).streams.filter(
        (s) => s.freshness !== 'off',
      ),
    );
  }

  /** The connection to REDIS_URL, made on first use. */
  redis(): Promise<Redis> {
    const url = this.config.redisUrl;
    if (!url) return Promise.reject(new Error('setting REDIS_URL: required here'));
    return (this.#redis ??= this.#connectRedis((m, health) => m.redisConnection(url, health)));
  }

  /** Redis, once it answers; one line and no start-up when it does not within 15 s (redis-health.ts). */
  async reachRedis(): Promise<void> {
    const url = this.config.redisUrl;
    if (url) await (this.#redis ??= this.#connectRedis((m, health) => m.reachRedis(url, health)));
  }

  async #connectRedis(connect: (m: QueueModule, health: RedisHealth) => Redis | Promise<Redis>): Promise<Redis> {
    const redis = await connect(await queueModule(), redisHealth(this.log));
    this.onStop('redis', () => void redis.disconnect());
    return redis;
  }

  /** The BullMQ `sync` queue. */
  syncQueue(): Promise<Queue<SyncJobData>> {
    return (this.#queueMade ??= this.#makeSyncQueue());
  }

  async #makeSyncQueue(): Promise<Queue<SyncJobData>> {
    const { createSyncQueue, syncJobCounts } = await queueModule();
    const redis = await this.redis();
    const queue = createSyncQueue(redis);
    redisHealth(this.log).watch(queue);
    this.#queue = queue;
    this.#queueCounts = { name: queue.name, getJobCounts: () => syncJobCounts(queue, redis) };
    this.onStop('queue', () => closeQueue(queue));
    return queue;
  }

  /**
   * Enqueues one run on the sync queue. Made once: its fairness reads which companies backfill on a timer, and
   * every re-sync or "run now" asks for the enqueuer again. One that could not be made is tried again next time.
   */
  #enqueuer(): Promise<Dispatch> {
    this.#enqueue ??= this.#makeEnqueuer().catch((err: unknown) => {
      this.#enqueue = undefined;
      throw err;
    });
    return this.#enqueue;
  }

  async #makeEnqueuer(): Promise<Dispatch> {
    const queue = await this.syncQueue();
    const { enqueueRun } = await queueModule();
    const { fleetFairness } = await import('../queue/fairness.ts');
    const fairness = fleetFairness(await this.warehouse(), jobs, () => this.companies, this.log);
    this.onStop('fairness', fairness.stop);
    const connection = await this.redis();
    return (run) => enqueueRun(queue, run, { fairness, connection });
  }

  /** Takes sync jobs from the queue. */
  async worker(): Promise<SyncWorker> {
    const env = await this.environment();
    // Two jobs per company unless WFS_WORKER_CONCURRENCY says otherwise: the companies table's count, kept up as it grows.
    const concurrency = () =>
      this.config.workerConcurrencySet
        ? this.config.workerConcurrency
        : Math.max(this.config.workerConcurrency, defaultConcurrency(env.companies.keys().length));
    const { startSyncWorker } = await import('../queue/worker.ts');
    const worker = startSyncWorker({
      env,
      jobs,
      connection: await this.redis(),
      concurrency: concurrency(),
      lockDurationMs: this.config.jobLockMs,
      log: this.log,
      health: redisHealth(this.log),
      runsEnded: () => runEndsRecorded(env.warehouse),
    });
    const off = env.companies.onAdded(() => {
      if (worker.worker.concurrency !== concurrency()) worker.worker.concurrency = concurrency();
    });
    this.onStop('worker', async () => {
      off();
      await worker.close();
    });
    return worker;
  }

  /** Runs jobs in this process (no Redis). */
  async inProcessRunner(): Promise<InProcessRunner> {
    if (this.#runner) return this.#runner;
    const env = await this.environment();
    const runner = createInProcessRunner(env, this.log);
    this.#runner = runner;
    this.onStop('running jobs', runner.close);
    const { pickUpResyncs } = await import('../queue/resync.ts');
    this.onStop(
      're-sync requests',
      pickUpResyncs(env.warehouse, (company, job) => runner.runNow(company, job), this.log),
    );
    return runner;
  }

  /**
   * Fires each job on its cron for the companies not paused at the time; `dispatch` runs it here or enqueues it.
   * A company that appears in the companies table (added, or resumed) gets its first runs at once.
   */
  async scheduler(dispatch: Dispatch): Promise<Scheduler> {
    const { companies } = await this.environment();
    const order = this.config.redisUrl ? await this.#turnOrder() : undefined;
    const scheduler = startScheduler({
      ...this.schedule,
      companies: (job) => companies.keysToRun(job.streams),
      dispatch,
      order,
      log: this.log,
    });
    const off = companies.onAdded((keys) => {
      for (const company of keys) void this.#firstRuns(dispatch, company, (job) => companies.keysToRun(job.streams));
    });
    this.onStop('scheduler', () => {
      off();
      scheduler.stop();
    });
    return scheduler;
  }

  /** A firing's companies in the order of their turns on the shared queue (turns.ts). */
  async #turnOrder(): Promise<FiringOrder> {
    const connection = await this.redis();
    const { turnOrder } = await import('../queue/turns.ts');
    return (job, intervalMs, shares, firedAt) => turnOrder(connection, job, intervalMs, shares, firedAt);
  }

  /**
   * One run of every job for a company new to this process, deduplicated by the minute (as at start-up); not of a
   * job whose streams the company turned off (`runs`: the companies a job runs for).
   */
  async #firstRuns(dispatch: Dispatch, company: string, runs: (job: JobDef) => readonly string[]): Promise<void> {
    this.log.info({ company }, 'first runs of a company added');
    const firedAt = new Date(Math.floor(Date.now() / 60_000) * 60_000);
    await Promise.all(
      jobs
        .filter((j) => !j.fullRefresh && runs(j).includes(company))
        .map((job) =>
          dispatch({ company, job, firedAt }).catch((err: unknown) =>
            this.log.error({ err, company, job: job.name }, 'could not dispatch a first run'),
          ),
        ),
    );
  }

  /** Where jobs go: the queue with Redis, this process without. */
  async dispatch(): Promise<Dispatch> {
    if (this.config.redisUrl) return this.#enqueuer();
    return (await this.inProcessRunner()).dispatch;
  }

  /** Lines per running stream on a terminal (and, off one, structured progress events when `plain`). */
  progress(plain: boolean): ProgressBoard {
    const board = new ProgressBoard({ console: this.console, live: this.live, plain, log: this.log });
    const off = board.listen(this.observers);
    this.onStop('progress', off);
    return board;
  }

  /**
   * HR pushes: the intake API on the ops server (`serve`), the push runner beside the sync jobs (`run`), the
   * push queue on /queues and the dashboard's retry button.
   */
  async push(o: { serve: boolean; run: boolean }): Promise<void> {
    const push = await import('../push/index.ts');
    const warehouse = await this.warehouse();
    if (o.serve)
      this.apps.push({
        path: '/',
        app: push.createPushApi({ intake: push.intakeContext(this.config, warehouse), token: this.config.pushToken }),
      });
    const intake = push.intakeContext(this.config, warehouse);
    this.actions.retryPush = async (id, by) => {
      const change = await push.retryPush(intake, by, id);
      return change && ['queued', 'in_doubt'].includes(change.status)
        ? `change ${id} is ${change.status} again`
        : `change ${id} is not failed or refused`;
    };
    this.actions.pushModel = async (name, verb, by) => {
      try {
        if (verb === 'run') {
          const r = await push.runPushModel(intake, by, name);
          return r.error ?? `model ${name}: ${r.changed} changed, ${r.queued} queued, ${r.refused} refused`;
        }
        if (verb === 'remove') {
          await push.removePushModel(intake, by, name);
          return `model ${name} removed`;
        }
        const m = await push.pausePushModel(intake, by, name, verb === 'pause');
        return `model ${name} is ${m.paused ? 'paused' : 'resumed'}`;
      } catch (err) {
        if (err instanceof push.ModelError) return err.message;
        throw err;
      }
    };
    if (this.config.redisUrl && o.serve) {
      const { Queue } = await import('bullmq');
      const queue = new Queue(push.PUSH_QUEUE, { connection: await this.redis() });
      redisHealth(this.log).watch(queue);
      this.boardQueues.push(queue);
      this.onStop('push queue', () => closeQueue(queue));
    }
    if (!o.run) return;
    const env = await this.environment();
    const { pushWebhookUrl: url, pushToken: token } = this.config;
    const runner = push.createPushRunner({
      warehouse: env.warehouse,
      // Looked up for each change: a company added, or whose key was rotated, is served without a restart.
      clients: { has: (key) => env.companies.get(key) !== undefined, get: (key) => env.companies.get(key)?.ctx.client },
      sealer: push.createSealer(push.secretKeyOf(this.config)),
      log: this.log,
      observers: this.observers,
      redis: this.config.redisUrl ? await this.redis() : undefined,
      health: redisHealth(this.log),
      webhook: url && token ? { url, token } : undefined,
    });
    this.runners.push({ name: 'push runner', start: () => runner.start(), stop: () => runner.stop() });
    const models = push.createModelScheduler({ intake: push.intakeContext(this.config, env.warehouse), log: this.log });
    this.runners.push({ name: 'push models', start: async () => models.start(), stop: () => models.stop() });
  }

  /** Starts the runners other modules added (the push runner). */
  async startRunners(): Promise<void> {
    for (const r of this.runners) {
      await r.start();
      this.onStop(r.name, () => r.stop());
    }
  }

  /** The ops server: status page, rejects, /queues, /metrics, /health, /ready, and the mounted apps. */
  async serve(): Promise<OpsServer> {
    const warehouse = await this.warehouse();
    if (!this.#env) await this.#listCompanies(warehouse);
    const queues = this.config.redisUrl ? [await this.syncQueue(), ...this.boardQueues] : undefined;
    if (!this.actions.runStream) this.actions.runStream = await this.#runStreamAction();
    this.actions.resyncStream ??= (company, stream, via, by) => this.resync(company, stream, via, by);
    const { startOpsServer } = await import('../ops/server.ts');
    const server = await startOpsServer({
      warehouse,
      port: this.config.httpPort,
      host: this.config.httpHost,
      log: this.log,
      metrics: this.metrics,
      live: this.live,
      companies: () => this.companies,
      budget: (company) =>
        this.#env?.companies.get(company)?.ctx.budget ??
        (this.config.sandbox ? BUILT_IN_SANDBOX.rateLimit : this.config.rateLimit),
      schedule: this.schedule,
      queues,
      redis: this.config.redisUrl ? await this.redis() : undefined,
      dashboardToken: this.config.dashboardToken,
      oidc: this.config.oidc,
      sessions: this.config.sessions,
      companyAdmin: await this.companyAdmin(),
      pushToken: this.config.pushToken,
      scheduleDelay: this.config.redisUrl ? () => this.scheduleDelay() : undefined,
      actions: this.actions,
      apps: this.apps,
    });
    this.onStop('http server', server.close);
    return server;
  }

  /** A process that serves without syncing lists the companies table's companies too, read again every refresh interval. */
  async #listCompanies(wh: Warehouse): Promise<void> {
    const read = async () => {
      this.#listed = (await listCompanies(wh)).map((c) => c.key);
    };
    await read();
    const timer = setInterval(
      () => read().catch((err: unknown) => this.log.warn({ err }, 'could not read the companies table')),
      this.config.companiesRefreshMs,
    );
    timer.unref();
    this.onStop('companies list', () => clearInterval(timer));
  }

  /** What an operator does to the companies (CLI, dashboard, JSON routes), on this process's warehouse. */
  async companyAdmin(): Promise<CompanyAdmin> {
    const { CompanyAdmin } = await import('../ops/company-admin.ts');
    // A refresh of the table, and a few seconds for the page in flight to be written.
    const settleMs = this.config.companiesRefreshMs + 2_000;
    return new CompanyAdmin({
      warehouse: await this.warehouse(),
      sealer: lazySealer(() => createSealer(secretKeyOf(this.config))),
      settleMs,
    });
  }

  /** A worker's own /metrics, /health and /ready, when WFS_METRICS_PORT is set. */
  async serveMetrics(): Promise<OpsServer | undefined> {
    if (this.config.metricsPort === undefined) return undefined;
    const { createMetricsApp, listen } = await import('../ops/server.ts');
    const app = createMetricsApp({
      metrics: this.metrics,
      warehouse: await this.warehouse(),
      redis: this.config.redisUrl ? await this.redis() : undefined,
    });
    const server = await listen(app, this.config.metricsPort, this.config.httpHost);
    this.onStop('metrics server', server.close);
    return server;
  }

  /** "Run now" for one stream: enqueued with Redis, else run here (when this process runs jobs). */
  /**
   * Asks for a re-sync of one stream: recorded (and on the timeline), then queued for a worker, or left for the
   * running start to take when there is no Redis. Says what happened; a stream the company turned off is refused
   * (CompanyError `stream_off`).
   */
  async resync(company: string, stream: StreamName, via: ResyncVia, by: Actor): Promise<string> {
    const { requestResync } = await import('../warehouse/resyncs.ts');
    const wh = await this.warehouse();
    return audited(wh, by, 'resync', { company, target: stream }, async () => {
      const { refuseIfOff } = await import('../warehouse/company-streams.ts');
      await refuseIfOff(wh, company, stream);
      const id = await requestResync(wh, { company, stream, via });
      if (this.config.redisUrl) {
        const { resyncJob } = await import('../queue/resync.ts');
        await (await this.#enqueuer())({ company, job: resyncJob(stream), firedAt: new Date() });
        return `re-sync ${id} of ${stream} of ${company} is queued`;
      }
      return `re-sync ${id} of ${stream} of ${company} is asked for: the running start takes it within seconds`;
    });
  }

  async #runStreamAction(): Promise<OpsActions['runStream']> {
    const oneStream = (stream: StreamName): JobDef => ({
      name: `manual-${stream}`,
      cron: '',
      streams: [stream],
      description: `${stream}, run from the dashboard`,
    });
    const { streamsOffOf } = await import('../warehouse/company-streams.ts');
    const wh = await this.warehouse();
    const isOff = async (company: string, stream: string) =>
      !!(await streamsOffOf(wh, [company])).get(company)?.includes(stream);
    const off = (company: string, stream: string) => `${stream} of ${company} is off: turn it on first`;
    const recorded = (run: (company: string, stream: StreamName) => Promise<string>) => {
      return (company: string, stream: StreamName, by: Actor) =>
        audited(wh, by, 'run now', { company, target: stream }, async () =>
          (await isOff(company, stream)) ? off(company, stream) : run(company, stream),
        );
    };
    if (this.config.redisUrl) {
      const enqueue = await this.#enqueuer();
      return recorded(async (company, stream) => {
        await enqueue({ company, job: oneStream(stream), firedAt: new Date() });
        return `${stream} of ${company} is queued`;
      });
    }
    if (!this.#runner) return undefined;
    const runner = this.#runner;
    return recorded(async (company, stream) => {
      void runner
        .runNow(company, oneStream(stream))
        .catch((err: unknown) => this.log.error({ err, company, stream }, 'run from the dashboard failed'));
      return `${stream} of ${company} is running`;
    });
  }

  /** The steps not yet stopped, the one stopping first: what a shutdown cut short leaves running. */
  stillRunning(): string[] {
    return [...this.#stopping, ...this.#stops.map((s) => s.name).reverse()];
  }

  /**
   * Stops every step in the reverse order, each named in the log. A step gets until `deadline` (epoch ms), or
   * STEP_LIMIT_MS without one: a step that never settles must not hold the rest back, nor, with nothing else
   * pending, end the process silently before the steps after it ran. Those that did not stop in time stay in
   * `stillRunning()`.
   */
  async stop(o: { deadline?: number } = {}): Promise<void> {
    for (let next = this.#stops.pop(); next; next = this.#stops.pop()) {
      const { name, stop } = next;
      this.#stopping.add(name);
      this.log.debug({ step: name }, 'stopping');
      const stopped = Promise.resolve()
        .then(stop)
        .catch((err: unknown) => this.log.error({ err, step: name }, 'error while stopping'));
      const limitMs = o.deadline === undefined ? STEP_LIMIT_MS : Math.max(0, o.deadline - Date.now());
      if (await settlesWithin(stopped, limitMs)) {
        this.#stopping.delete(name);
        continue;
      }
      this.log.warn({ step: name, limitMs }, 'a step did not stop in time; going on');
      void stopped.then(() => this.#stopping.delete(name));
    }
  }
}
