import { parseArgs } from 'node:util';
import { App } from '../app/index.ts';
import { loadConfig } from '../config.ts';
import { log } from '../log.ts';
import { isStreamName, personalData } from '../resources/index.ts';
import { cliActor } from '../warehouse/audit.ts';
import {
  listNewFields,
  newFieldModes,
  type ListedField,
  type ResyncDue,
} from '../warehouse/personal-data/new-fields.ts';
import { DEFAULT_POLICY_KEY } from '../warehouse/personal-data/policy.ts';
import type { RewriteCounts } from '../warehouse/personal-data/rewrite.ts';
import { UsageError } from './usage-error.ts';

const USAGE = `usage:
  wfsync schema [--company KEY] [--json]
  wfsync schema classify COMPANY|--default FIELD not-personal|personal|patient
  wfsync schema new-fields COMPANY|--default keep|hold

Fields the service sends that no column maps (kept in _extra), per company and stream: their class, when first and
last seen, how many records carried them, their JSON type and a masked example, and when one stopped coming.
classify says what a field is: personal or patient puts it under the personal-data policies (wfsync personal-data
set COMPANY FIELD=hash|block); a company's own class wins over the default's. new-fields hold stores no value of a
field no class names (removing those already stored); classifying it then, or keep, re-syncs the streams that
sent it, whose next complete read stores its values.
`;

export async function runSchemaCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    options: {
      help: { type: 'boolean', short: 'h' },
      json: { type: 'boolean' },
      company: { type: 'string' },
      default: { type: 'boolean' },
    },
    allowPositionals: true,
    strict: true,
  });
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  const [verb, ...rest] = positionals;
  if (verb === undefined) {
    if (values.default) throw new UsageError('schema: --default goes with classify or new-fields');
    return listFields(values.company, values.json === true);
  }
  if (verb !== 'classify' && verb !== 'new-fields')
    throw new UsageError(`schema: unknown subcommand "${verb.slice(0, 40)}" (classify, new-fields)`);
  const company = values.default ? DEFAULT_POLICY_KEY : rest.shift();
  const wanted = verb === 'classify' ? 2 : 1;
  if (!company || rest.length !== wanted)
    throw new UsageError(
      `schema ${verb}: expected ${verb === 'classify' ? 'COMPANY|--default FIELD CLASS' : 'COMPANY|--default keep|hold'}`,
    );
  return change(verb, company, rest);
}

async function listFields(company: string | undefined, json: boolean): Promise<number> {
  const app = new App(loadConfig(), log);
  try {
    const wh = await app.warehouse();
    const rows = await listNewFields(wh, personalData, company);
    const modes = await newFieldModes(wh);
    process.stdout.write(json ? `${JSON.stringify(rows, null, 2)}\n` : formatSchemaChanges(rows, modes));
    return 0;
  } finally {
    await app.stop();
  }
}

async function change(verb: 'classify' | 'new-fields', company: string, rest: string[]): Promise<number> {
  const app = new App(loadConfig(), log);
  try {
    const admin = await app.companyAdmin();
    const done =
      verb === 'classify'
        ? await admin.classify(cliActor(), company, rest[0]!, rest[1])
        : await admin.newFields(cliActor(), company, rest[0]);
    const who = company === DEFAULT_POLICY_KEY ? 'the default' : company;
    process.stdout.write(
      'field' in done
        ? `${done.field} is ${done.class} for ${who}\n`
        : `new fields of ${who}: ${done.mode === 'hold' ? 'held until classified' : 'kept'}\n`,
    );
    for (const [c, counts] of Object.entries(done.rewritten)) {
      const line = rewrittenLine(counts);
      if (line) process.stdout.write(`${c}: rows rewritten: ${line}\n`);
    }
    for (const r of await resync(app, done.resync)) process.stdout.write(`${r}\n`);
    return 0;
  } finally {
    await app.stop();
  }
}

function rewrittenLine(counts: RewriteCounts): string | undefined {
  const changed = Object.entries(counts).filter(([, n]) => n > 0);
  return changed.length === 0 ? undefined : changed.map(([t, n]) => `${t} ${n}`).join(', ');
}

/** Asks for each re-sync (through the queue, or for the running start); what each ask said. */
async function resync(app: App, due: readonly ResyncDue[]): Promise<string[]> {
  const said: string[] = [];
  for (const d of due) if (isStreamName(d.stream)) said.push(await app.resync(d.company, d.stream, 'cli', cliActor()));
  return said;
}

export function formatSchemaChanges(
  rows: readonly ListedField[],
  modes: Readonly<Record<string, string>> = {},
): string {
  if (rows.length === 0) return 'the service has sent no field that no column maps\n';
  const head = `${'company'.padEnd(12)} ${'stream'.padEnd(28)} ${'field'.padEnd(28)} ${'class'.padEnd(13)} ${'type'.padEnd(8)} ${'first seen'.padEnd(24)} ${'records'.padStart(9)}  state`;
  const lines = rows.map(
    (r) =>
      `${r.company_key.padEnd(12)} ${r.stream.padEnd(28)} ${r.field_path.padEnd(28)} ${r.class.padEnd(13)} ${r.json_type.padEnd(8)} ${r.field_first_seen_at.toISOString().padEnd(24)} ${String(r.records_seen).padStart(9)}  ${
        r.gone_at
          ? `gone since ${r.gone_at.toISOString()}`
          : `coming (last ${r.field_last_seen_at.toISOString()}); example ${JSON.stringify(r.example)}${r.held ? '; values held' : ''}`
      }`,
  );
  const held = Object.entries(modes)
    .filter(([, m]) => m === 'hold')
    .map(([c]) => (c === DEFAULT_POLICY_KEY ? '(default)' : c));
  const footer = held.length > 0 ? [`new fields held until classified: ${held.join(', ')}`] : [];
  return `${[head, ...lines, ...footer].join('\n')}\n`;
}
