import { parseArgs } from 'node:util';
import type { Logger } from 'pino';
import { jobs } from '../../jobs/index.ts';
import { formatRateLimit, loadConfig, type Config } from '../config.ts';
import { log } from '../log.ts';
import { shutdownSignal } from '../shutdown.ts';
import { startOpsServer, type OpsServer } from '../ops/server.ts';
import { formatSummaries, progressPrinter } from '../sync/command.ts';
import { BUILT_IN_SANDBOX, openEnvironment, shownUrl, type Environment } from '../sync/environment.ts';
import { runStreams, selectStreams } from '../sync/runner.ts';
import { createInProcessRunner } from './in-process.ts';
import { startScheduler, type Scheduler } from './scheduler.ts';
import { createSyncQueue, enqueueRun, reachRedis } from './sync-queue.ts';
import { redisHealth } from '../redis-health.ts';
import { startSyncWorker } from './worker.ts';

/** One part of the process to stop, named for the shutdown log. */
type Stop = [name: string, stop: () => Promise<void> | void];

/** A shutdown that takes longer than this is stuck: say where, and exit anyway. */
const SHUTDOWN_LIMIT_MS = 15_000;

function noArgs(command: string, args: string[]): boolean {
  const { values } = parseArgs({ args, options: { help: { type: 'boolean', short: 'h' } }, strict: true });
  if (values.help) process.stdout.write(`usage: wfsync ${command}\n\nSettings come from the environment or .env (see README).\n`);
  return !!values.help;
}

/** Waits for Ctrl-C or SIGTERM, then stops everything in order, each step in the log. */
async function untilSignal(stops: Stop[]): Promise<number> {
  const signal = await shutdownSignal((again) => log.debug({ signal: again }, 'already stopping'));
  log.info({ signal }, 'stopping: finishing the pages being written');
  let step = '';
  const watchdog = setTimeout(() => {
    log.error({ step, limitMs: SHUTDOWN_LIMIT_MS }, 'shutdown is stuck; exiting anyway');
    process.exit(1);
  }, SHUTDOWN_LIMIT_MS);
  watchdog.unref();
  for (const [name, stop] of stops) {
    step = name;
    log.debug({ step }, 'stopping');
    await Promise.resolve()
      .then(stop)
      .catch((err: unknown) => log.error({ err, step }, 'error while stopping'));
  }
  clearTimeout(watchdog);
  log.info('stopped');
  return 0;
}

function announce(config: Config, env: Environment, ops?: OpsServer): void {
  const lines = [
    'workforce-sync',
    env.sandbox
      ? `  source:    BUILT-IN SANDBOX ${env.sandbox.url} (simulated data, ${formatRateLimit(BUILT_IN_SANDBOX.rateLimit)} per key; set WFS_BASE_URL and WFS_API_KEY for a real service)`
      : `  source:    ${config.companies.map((c) => `${c.key} ${c.baseUrl}`).join(', ')}`,
    `  warehouse: psql '${shownUrl(config, env)}'   (schema ${config.dbSchema})`,
    `  jobs:      ${config.redisUrl ? 'BullMQ on REDIS_URL' : 'in this process (no REDIS_URL)'}`,
    ...(ops ? [`  status:    ${ops.url}/  (JSON at /status, health at /health)`] : []),
  ];
  process.stderr.write(`${lines.join('\n')}\n`);
}

/** Scheduler + workers + HTTP server in one process; jobs in-process when there is no Redis. */
export async function runStartCommand(args: string[]): Promise<number> {
  if (noArgs('start', args)) return 0;
  const config = loadConfig();
  const env = await openEnvironment(config, log);
  const ops = await startOpsServer({ warehouse: env.warehouse, port: config.httpPort, host: config.httpHost, log });
  announce(config, env, ops);
  const companies = config.companies.map((c) => c.key);
  let stops: Stop[];
  if (!config.redisUrl) {
    const runner = createInProcessRunner(env, log);
    process.stderr.write('first sync of every stream:\n');
    for (const ctx of env.contexts) {
      const summary = await runStreams({ ...ctx, onProgress: progressPrinter() }, selectStreams());
      process.stderr.write(formatSummaries([summary]));
    }
    const scheduler = startScheduler(schedulerOptions(config, companies, runner.dispatch, log));
    printUpcoming(scheduler);
    stops = [
      ['scheduler', () => scheduler.stop()],
      ['running jobs', runner.close],
      ['status server', ops.close],
      ['environment', env.close],
    ];
  } else {
    const health = redisHealth(log);
    const connection = await reachRedis(config.redisUrl, health);
    const queue = createSyncQueue(connection);
    health.watch(queue);
    const worker = startSyncWorker({ env, connection, concurrency: config.workerConcurrency, log, health });
    const scheduler = startScheduler(schedulerOptions(config, companies, (run) => enqueueRun(queue, run), log));
    await enqueueFirstRuns(queue, companies);
    printUpcoming(scheduler);
    stops = [
      ['scheduler', () => scheduler.stop()],
      ['worker', worker.close],
      ['queue', () => queue.close()],
      ['status server', ops.close],
      ['environment', env.close],
      ['redis', () => void connection.disconnect()],
    ];
  }
  return untilSignal(stops);
}

/** One run of every job now, deduplicated by the minute so replicas starting together enqueue it once. */
async function enqueueFirstRuns(queue: ReturnType<typeof createSyncQueue>, companies: string[]): Promise<void> {
  const minute = new Date(Math.floor(Date.now() / 60_000) * 60_000);
  for (const company of companies) {
    for (const job of jobs.filter((j) => !j.fullRefresh)) await enqueueRun(queue, { company, job, firedAt: minute });
  }
}

function schedulerOptions(config: Config, companies: string[], dispatch: Parameters<typeof startScheduler>[0]['dispatch'], l: Logger) {
  return { jobs, companies, timezone: config.timezone, cronOverrides: config.cron, dispatch, log: l };
}

function printUpcoming(scheduler: Scheduler): void {
  const lines = scheduler.upcoming().map((u) => `  ${u.job.padEnd(26)} ${u.cron.padEnd(16)} next ${u.next?.toISOString() ?? '-'}`);
  process.stderr.write(`scheduled incremental syncs (Ctrl-C to stop):\n${lines.join('\n')}\n`);
}

/** Workers only: take sync jobs from the queue. */
export async function runWorkerCommand(args: string[]): Promise<number> {
  if (noArgs('worker', args)) return 0;
  const config = loadConfig();
  if (!config.redisUrl) throw new Error('setting REDIS_URL: required by wfsync worker (wfsync start runs jobs in-process without it)');
  const health = redisHealth(log);
  const connection = await reachRedis(config.redisUrl, health);
  const env = await openEnvironment(config, log);
  const worker = startSyncWorker({
    health,
    env,
    connection,
    concurrency: config.workerConcurrency,
    lockDurationMs: config.jobLockMs,
    log,
  });
  log.info({ concurrency: config.workerConcurrency }, 'worker started');
  return untilSignal([
    ['worker', worker.close],
    ['environment', env.close],
    ['redis', () => void connection.disconnect()],
  ]);
}

/** The scheduler only: enqueue each job on its cron. */
export async function runSchedulerCommand(args: string[]): Promise<number> {
  if (noArgs('scheduler', args)) return 0;
  const config = loadConfig();
  if (!config.redisUrl) throw new Error('setting REDIS_URL: required by wfsync scheduler');
  const health = redisHealth(log);
  const connection = await reachRedis(config.redisUrl, health);
  const queue = createSyncQueue(connection);
  health.watch(queue);
  const companies = config.companies.map((c) => c.key);
  const scheduler = startScheduler(schedulerOptions(config, companies, (run) => enqueueRun(queue, run), log));
  printUpcoming(scheduler);
  return untilSignal([
    ['scheduler', () => scheduler.stop()],
    ['queue', () => queue.close()],
    ['redis', () => void connection.disconnect()],
  ]);
}
