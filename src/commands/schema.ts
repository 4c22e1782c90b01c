import { parseArgs } from 'node:util';
import { App } from '../app/index.ts';
import { loadConfig } from '../config.ts';
import { log } from '../log.ts';
import { listSchemaChanges, type SchemaChangeRow } from '../warehouse/schema-changes.ts';

/** `wfsync schema [--json]`: the fields the service sends that no column maps, and those that stopped coming. */
export async function runSchemaCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: { help: { type: 'boolean', short: 'h' }, json: { type: 'boolean' }, company: { type: 'string' } },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(
      'usage: wfsync schema [--company KEY] [--json]\n\nFields the service sends that no column maps (kept in _extra), per company and stream: when first and last seen,\nhow many records carried them, their JSON type and a masked example, and when one stopped coming.\n',
    );
    return 0;
  }
  const app = new App(loadConfig(), log);
  let rows: SchemaChangeRow[];
  try {
    rows = await listSchemaChanges(await app.warehouse(), { companyKey: values.company });
  } finally {
    await app.stop();
  }
  process.stdout.write(values.json ? `${JSON.stringify(rows, null, 2)}\n` : formatSchemaChanges(rows));
  return 0;
}

export function formatSchemaChanges(rows: readonly SchemaChangeRow[]): string {
  if (rows.length === 0) return 'the service has sent no field that no column maps\n';
  const head = `${'company'.padEnd(12)} ${'stream'.padEnd(28)} ${'field'.padEnd(28)} ${'type'.padEnd(8)} ${'first seen'.padEnd(24)} ${'records'.padStart(9)}  state`;
  const lines = rows.map(
    (r) =>
      `${r.company_key.padEnd(12)} ${r.stream.padEnd(28)} ${r.field_path.padEnd(28)} ${r.json_type.padEnd(8)} ${r.field_first_seen_at.toISOString().padEnd(24)} ${String(r.records_seen).padStart(9)}  ${
        r.gone_at
          ? `gone since ${r.gone_at.toISOString()}`
          : `coming (last ${r.field_last_seen_at.toISOString()}); example ${JSON.stringify(r.example)}`
      }`,
  );
  return `${[head, ...lines].join('\n')}\n`;
}
