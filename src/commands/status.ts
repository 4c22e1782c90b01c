import { parseArgs } from 'node:util';
import { App } from '../app/index.ts';
import { Shutdown, untilSignal } from '../app/lifecycle.ts';
import { shownUrl } from '../warehouse/configured.ts';
import { loadConfig, unsyncedFormsNotice } from '../config.ts';
import { log } from '../log.ts';
import { formatLag } from '../ops/freshness.ts';
import { readStatus, type Status } from '../ops/status.ts';
import { describeCompany, describeProgress } from '../ops/progress-view.ts';

function options(args: string[]) {
  return parseArgs({
    args,
    options: { help: { type: 'boolean', short: 'h' }, json: { type: 'boolean' } },
    strict: true,
  }).values;
}

/** The app with its warehouse, migrated; one line naming the warehouse when it cannot be reached. */
async function openConfiguredWarehouse() {
  const app = new App(loadConfig(), log);
  return { app, wh: await app.warehouse() };
}

/** Applies the warehouse migrations (tables, views, comments); safe to run again. */
export async function runMigrateCommand(args: string[]): Promise<number> {
  if (options(args).help) {
    process.stdout.write(
      'usage: wfsync migrate\n\nApplies the warehouse migrations to DATABASE_URL (or the embedded Postgres).\n',
    );
    return 0;
  }
  const { app, wh } = await openConfiguredWarehouse();
  process.stderr.write(`warehouse migrated: psql '${shownUrl(app.config, wh)}' (schema ${wh.schema})\n`);
  await app.stop();
  return 0;
}

/** Each stream's last run, last success and errors; exit code 1 when any stream's last run failed. */
export async function runStatusCommand(args: string[]): Promise<number> {
  const values = options(args);
  if (values.help) {
    process.stdout.write(
      "usage: wfsync status [--json]\n\nEach stream's last run per company; exit code 1 when a last run failed.\n",
    );
    return 0;
  }
  const { app, wh } = await openConfiguredWarehouse();
  const unsynced = unsyncedFormsNotice(app.config);
  if (unsynced) process.stderr.write(`${unsynced}\n`);
  let status: Status;
  try {
    status = await readStatus(wh, { companies: app.companies, schedule: app.schedule });
  } finally {
    await app.stop();
  }
  process.stdout.write(values.json ? `${JSON.stringify(status, null, 2)}\n` : formatStatus(status));
  return status.streams.some(failing) ? 1 : 0;
}

/** A stream whose last run failed, unless the company has turned it off since. */
const failing = (s: Status['streams'][number]) => s.lastOutcome === 'failed' && s.freshness !== 'off';

export function formatStatus(status: Status): string {
  const head = `${'company'.padEnd(12)} ${'stream'.padEnd(32)} ${'fresh'.padEnd(6)} ${'lag'.padStart(12)} ${'last run'.padEnd(8)} ${'last success'.padEnd(24)} ${'rows'.padStart(8)}  error`;
  const rows = status.streams.map(
    (s) =>
      `${s.company.padEnd(12)} ${s.stream.padEnd(32)} ${s.freshness.padEnd(6)} ${formatLag(s.lagSeconds === null ? null : s.lagSeconds * 1000).padStart(12)} ${String(s.running ? 'running' : (s.lastOutcome ?? 'never')).padEnd(8)} ${(s.lastOkAt?.toISOString() ?? '-').padEnd(24)} ${String(s.rows).padStart(8)}  ${failing(s) ? (s.error ?? '') : ''}`,
  );
  const push = Object.entries(status.push.counts);
  const pushLine = push.length
    ? `push: ${push.map(([k, n]) => `${n} ${k}`).join(', ')}; ${status.push.inDoubt} in doubt; oldest queued ${status.push.oldestQueuedAt?.toISOString() ?? '-'}`
    : 'push: no changes';
  const body = status.streams.length ? [head, ...rows] : ['no sync has run yet'];
  const underWay = (status.progress ?? []).flatMap((c) => [
    describeCompany(c),
    ...status.streams
      .filter((s) => s.company === c.company && s.progress)
      .map((s) => `  ${s.stream.padEnd(32)} ${describeProgress(s.progress!)}`),
  ]);
  if (underWay.length) body.push('', 'under way:', ...underWay, '');
  return `${[...body, `${status.rejectsTotal} records still refused (open in sync_rejects)`, pushLine].join('\n')}\n`;
}

/** The status server alone: status page, rejects, queues (with REDIS_URL), metrics, health. */
export async function runServeCommand(args: string[]): Promise<number> {
  if (options(args).help) {
    process.stdout.write(
      'usage: wfsync serve\n\nServes /, /rejects, /queues, /metrics, /status, /health and /ready on WFS_HTTP_PORT.\n',
    );
    return 0;
  }
  const app = new App(loadConfig(), log);
  const shutdown = new Shutdown(app);
  try {
    await app.push({ serve: true, run: false });
    const server = await app.serve();
    process.stderr.write(`status at ${server.url}/\n`);
  } catch (e) {
    await shutdown.stop();
    throw e;
  }
  return untilSignal(app, shutdown);
}
