import { readFileSync } from 'node:fs';
import { recordStart } from '../warehouse/start-events.ts';
import { parseArgs } from 'node:util';
import { jobs } from '../../jobs/index.ts';
import { App } from '../app/index.ts';
import { BUILT_IN_SANDBOX, type Environment } from '../app/environment.ts';
import { shownUrl } from '../warehouse/configured.ts';
import { Shutdown, untilSignal } from '../app/lifecycle.ts';
import { formatRateLimit, loadConfig, unsyncedFormsNotice, type Config } from '../config.ts';
import { log } from '../log.ts';
import type { OpsServer } from '../ops/server.ts';
import { formatSummaries } from './sync.ts';
import { runStreams, selectStreams } from '../sync/runner.ts';
import type { Dispatch, Scheduler } from '../queue/scheduler.ts';
import type { JobDef } from '../queue/job.ts';

function noArgs(command: string, args: string[]): boolean {
  const { values } = parseArgs({ args, options: { help: { type: 'boolean', short: 'h' } }, strict: true });
  if (values.help)
    process.stdout.write(`usage: wfsync ${command}\n\nSettings come from the environment or .env (see README).\n`);
  return !!values.help;
}

function announce(app: App, env: Environment, ops: OpsServer): void {
  const { config } = app;
  const lines = [
    'workforce-sync',
    env.sandbox
      ? `  source:    BUILT-IN SANDBOX ${env.sandbox.url} (simulated data, ${formatRateLimit(BUILT_IN_SANDBOX.rateLimit)} per key; set WFS_BASE_URL and WFS_API_KEY for a real service)`
      : `  source:    ${config.companies.map((c) => `${c.key} ${c.baseUrl}`).join(', ')}`,
    `  warehouse: psql '${shownUrl(config, env.warehouse)}'   (schema ${config.dbSchema})`,
    `  jobs:      ${config.redisUrl ? 'BullMQ on REDIS_URL' : 'in this process (no REDIS_URL)'}`,
    `  status:    ${ops.url}/  (queues at /queues, metrics at /metrics, health at /health and /ready)`,
  ];
  const forms = unsyncedFormsNotice(config);
  if (forms) lines.push(`  note:      ${forms}`);
  app.console.write(`${lines.join('\n')}\n`);
}

function packageVersion(): string {
  return (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string })
    .version;
}

/** Scheduler + workers + HTTP server in one process; jobs in-process when there is no Redis. */
export async function runStartCommand(args: string[]): Promise<number> {
  if (noArgs('start', args)) return 0;
  const app = new App(loadConfig(), log);
  const shutdown = new Shutdown(app);
  try {
    await app.reachRedis();
    const env = await app.environment();
    await recordStart(env.warehouse, env.companies.keys(), packageVersion());
    const board = app.progress(true);
    await app.push({ serve: true, run: true });
    if (app.config.redisUrl) {
      await app.worker();
      const ops = await app.serve();
      await app.startRunners();
      announce(app, env, ops);
      const dispatch = await app.dispatch();
      const scheduler = await app.scheduler(dispatch);
      await enqueueFirstRuns(dispatch, env.companies.activeKeys(), (job) => env.companies.keysToRun(job.streams));
      board.plain = false;
      printUpcoming(app, scheduler);
    } else {
      await app.inProcessRunner();
      const ops = await app.serve();
      await app.startRunners();
      announce(app, env, ops);
      app.console.write('first sync of every stream:\n');
      for (const ctx of env.contexts) {
        if (shutdown.signal.aborted) break;
        const summary = await runStreams(
          { ...ctx, signal: ctx.signal ? AbortSignal.any([ctx.signal, shutdown.signal]) : shutdown.signal },
          selectStreams(),
        );
        board.clear();
        app.console.write(formatSummaries([summary]));
      }
      board.plain = false;
      const scheduler = await app.scheduler(await app.dispatch());
      printUpcoming(app, scheduler);
    }
  } catch (e) {
    await shutdown.stop();
    throw e;
  }
  return untilSignal(app, shutdown);
}

/**
 * One run of every job now for the companies it runs for (not paused, a stream of it on), deduplicated by the minute
 * so replicas starting together enqueue it once; queued with the scheduler's priorities, so companies take turns.
 */
async function enqueueFirstRuns(
  dispatch: Dispatch,
  companies: readonly string[],
  runsFor: (job: JobDef) => readonly string[],
): Promise<void> {
  const minute = new Date(Math.floor(Date.now() / 60_000) * 60_000);
  const first = jobs.filter((j) => !j.fullRefresh).map((job) => ({ job, runs: new Set(runsFor(job)) }));
  for (const company of companies) {
    for (const { job, runs } of first) if (runs.has(company)) await dispatch({ company, job, firedAt: minute });
  }
}

function printUpcoming(app: App, scheduler: Scheduler): void {
  const lines = scheduler
    .upcoming()
    .map((u) => `  ${u.job.padEnd(26)} ${u.cron.padEnd(16)} next ${u.next?.toISOString() ?? '-'}`);
  app.console.write(`scheduled incremental syncs (Ctrl-C to stop):\n${lines.join('\n')}\n`);
}

function requireRedis(config: Config, command: string, why = ''): void {
  if (!config.redisUrl) throw new Error(`setting REDIS_URL: required by wfsync ${command}${why}`);
}

/** Workers only: take sync jobs from the queue; their own /metrics on WFS_METRICS_PORT. */
export async function runWorkerCommand(args: string[]): Promise<number> {
  if (noArgs('worker', args)) return 0;
  const app = new App(loadConfig(), log);
  requireRedis(app.config, 'worker', ' (wfsync start runs jobs in-process without it)');
  const shutdown = new Shutdown(app);
  try {
    await app.reachRedis();
    const worker = await app.worker();
    await app.push({ serve: false, run: true });
    // Its queue's job counts go in the worker's own /metrics too.
    await app.syncQueue();
    app.progress(false);
    const metrics = await app.serveMetrics();
    await app.startRunners();
    log.info(
      { concurrency: worker.worker.concurrency, metrics: metrics && `${metrics.url}/metrics` },
      'worker started',
    );
  } catch (e) {
    await shutdown.stop();
    throw e;
  }
  return untilSignal(app, shutdown);
}

/** The scheduler only: enqueue each job on its cron. */
export async function runSchedulerCommand(args: string[]): Promise<number> {
  if (noArgs('scheduler', args)) return 0;
  const app = new App(loadConfig(), log);
  requireRedis(app.config, 'scheduler');
  const shutdown = new Shutdown(app);
  try {
    await app.reachRedis();
    const scheduler = await app.scheduler(await app.dispatch());
    printUpcoming(app, scheduler);
  } catch (e) {
    await shutdown.stop();
    throw e;
  }
  return untilSignal(app, shutdown);
}
