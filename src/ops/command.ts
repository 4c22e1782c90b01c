import { parseArgs } from 'node:util';
import { loadConfig, unsyncedFormsNotice } from '../config.ts';
import { log } from '../log.ts';
import { shutdownSignal } from '../shutdown.ts';
import { openWarehouse, type Warehouse } from '../warehouse/index.ts';
import { warehouseError, withoutPassword } from '../sync/environment.ts';
import { readStatus, type Status } from './status.ts';
import { startOpsServer } from './server.ts';

function options(args: string[]) {
  return parseArgs({ args, options: { help: { type: 'boolean', short: 'h' }, json: { type: 'boolean' } }, strict: true }).values;
}

/** The configured warehouse, migrated; one line naming it when it cannot be reached. */
async function openConfiguredWarehouse() {
  const config = loadConfig();
  let wh: Warehouse | undefined;
  try {
    wh = await openWarehouse({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, schema: config.dbSchema, logger: log });
    await wh.migrate();
    return { config, wh };
  } catch (e) {
    await wh?.close().catch(() => undefined);
    throw warehouseError(config, e);
  }
}

/** Applies the warehouse migrations (tables, views, comments); safe to run again. */
export async function runMigrateCommand(args: string[]): Promise<number> {
  if (options(args).help) {
    process.stdout.write('usage: wfsync migrate\n\nApplies the warehouse migrations to DATABASE_URL (or the embedded Postgres).\n');
    return 0;
  }
  const { wh, config } = await openConfiguredWarehouse();
  const shown = config.databaseUrl ? withoutPassword(wh.url) : wh.url;
  process.stderr.write(`warehouse migrated: psql '${shown}' (schema ${wh.schema})\n`);
  await wh.close();
  return 0;
}

/** Each stream's last run, last success and errors; exit code 1 when any stream's last run failed. */
export async function runStatusCommand(args: string[]): Promise<number> {
  const values = options(args);
  if (values.help) {
    process.stdout.write('usage: wfsync status [--json]\n\nEach stream\'s last run per company; exit code 1 when a last run failed.\n');
    return 0;
  }
  const { wh, config } = await openConfiguredWarehouse();
  const unsynced = unsyncedFormsNotice(config);
  if (unsynced) process.stderr.write(`${unsynced}\n`);
  let status: Status;
  try {
    status = await readStatus(wh);
  } finally {
    await wh.close();
  }
  process.stdout.write(values.json ? `${JSON.stringify(status, null, 2)}\n` : formatStatus(status));
  return status.streams.some((s) => s.lastOutcome === 'failed') ? 1 : 0;
}

export function formatStatus(status: Status): string {
  if (status.streams.length === 0) return 'no sync has run yet\n';
  const head = `${'company'.padEnd(12)} ${'stream'.padEnd(32)} ${'last run'.padEnd(8)} ${'last success'.padEnd(24)} ${'rows'.padStart(8)}  error`;
  const rows = status.streams.map(
    (s) =>
      `${s.company.padEnd(12)} ${s.stream.padEnd(32)} ${String(s.lastOutcome ?? 'running').padEnd(8)} ${(s.lastOkAt?.toISOString() ?? '-').padEnd(24)} ${String(s.rows).padStart(8)}  ${s.error ?? ''}`,
  );
  return `${[head, ...rows].join('\n')}\n${status.rejectsTotal} rejected records in sync_rejects\n`;
}

/** The status server alone (health, status page and JSON). */
export async function runServeCommand(args: string[]): Promise<number> {
  if (options(args).help) {
    process.stdout.write('usage: wfsync serve\n\nServes /, /status and /health on WFS_HTTP_PORT.\n');
    return 0;
  }
  const { config, wh } = await openConfiguredWarehouse();
  const server = await startOpsServer({ warehouse: wh, port: config.httpPort, host: config.httpHost, log });
  process.stderr.write(`status at ${server.url}/\n`);
  await shutdownSignal();
  await server.close();
  await wh.close();
  return 0;
}
