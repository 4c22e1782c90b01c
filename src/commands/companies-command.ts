import { createInterface } from 'node:readline/promises';
import { parseArgs } from 'node:util';
import { App } from '../app/index.ts';
import { loadConfig } from '../config.ts';
import { log } from '../log.ts';
import {
  companyView,
  parseApiKey,
  parseNewCompany,
  parseStreamsChange,
  type CompanyAdmin,
  type StreamsChangeInput,
} from '../ops/company-admin.ts';
import type { CompanyRecord, NewCompany } from '../warehouse/company-records.ts';
import { cliActor } from '../warehouse/audit.ts';
import { UsageError } from './usage-error.ts';

const USAGE = `usage:
  wfsync companies add KEY --base-url URL --api-key-stdin [--form-ids 1,2] [--run-type-ids 1,2] [--rate-limit 100/60s]
  wfsync companies list [--json]
  wfsync companies pause KEY
  wfsync companies resume KEY
  wfsync companies rotate-key KEY --api-key-stdin
  wfsync companies remove KEY [--purge] [--yes]
  wfsync companies streams KEY --off STREAM[,STREAM] [--purge] [--yes] | --on STREAM[,STREAM]

Companies live in the warehouse's companies table; running start, scheduler and worker processes pick a change
up within WFS_COMPANIES_REFRESH_SECONDS. The API key is read from standard input (never an argument, which
other users may see) and stored encrypted under WFS_SECRET_KEY. add and rotate-key check it with one request.
Companies from WFS_COMPANIES or WFS_API_KEY are managed there and cannot be changed here, but for their streams.
streams --off stops reading streams the company does not want (no request, no run scheduled); their rows stay
unless --purge deletes them, with their checkpoints, so that --on starts them again with a first sync. A stream
other streams read goes off only with them.
`;

/** Standard input up to its end, without the line break that ends it (`echo KEY |`, a here-string). */
async function readStdin(): Promise<string> {
  if (process.stdin.isTTY) process.stderr.write('API key (then Ctrl-D): ');
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}

/** Purging deletes rows for good: on a terminal the key is typed again; elsewhere --yes says so. */
async function confirmPurge(verb: string, key: string, yes: boolean, rows: string): Promise<boolean> {
  if (yes) return true;
  if (!process.stdin.isTTY)
    throw new UsageError(`companies ${verb} ${key} --purge: add --yes to confirm (standard input is not a terminal)`);
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return (await rl.question(`This deletes ${rows}. Type its key to go on: `)).trim() === key;
  } finally {
    rl.close();
  }
}

/** `streams`' options as a change, or the one line that refuses them. */
function streamsChange(values: { off?: string; on?: string; purge?: boolean }): StreamsChangeInput {
  if (values.off !== undefined && values.on !== undefined)
    throw new UsageError('companies streams: give --off or --on, not both');
  if (values.off === undefined && values.on === undefined)
    throw new UsageError('companies streams: give --off STREAM[,STREAM] or --on STREAM[,STREAM]');
  if (values.on !== undefined && values.purge)
    throw new UsageError('companies streams: --purge goes with --off (turning a stream on deletes nothing)');
  const parsed = parseStreamsChange({ off: values.off, on: values.on, purge: values.purge });
  if (!parsed.ok) throw new UsageError(`companies streams: ${parsed.error.replace(/^(off|on):/, '--$1:')}`);
  return parsed.value;
}

/** Turns the streams off or on, and says what running processes will do. */
async function switchStreams(admin: CompanyAdmin, key: string, change: StreamsChangeInput, refreshMs: number) {
  const { purged } = await admin.streams(cliActor(), key, change);
  const within = `running processes ${'off' in change ? 'stop reading' : 'read'} them within ${refreshMs / 1000} s`;
  if (!('off' in change))
    return `company ${key}: ${change.on.join(', ')} on again; ${within}, each from its checkpoint (from the start once purged)`;
  const rows = purged ? Object.values(purged).reduce((a, b) => a + b, 0) : 0;
  const tables = purged ? Object.values(purged).filter((n) => n > 0).length : 0;
  return `company ${key}: ${change.off.join(', ')} off; ${within}; ${purged ? `${rows} rows purged from ${tables} tables` : 'their rows stay (--purge deletes them)'}`;
}

function row(c: CompanyRecord): string {
  const v = companyView(c);
  return [
    v.key.padEnd(16),
    (v.paused ? 'paused' : 'active').padEnd(7),
    v.managedBy.padEnd(12),
    v.rateLimit.padEnd(9),
    v.baseUrl,
    ...(v.streamsOff.length ? [` streams off: ${v.streamsOff.join(',')}`] : []),
  ].join(' ');
}

const OPTIONS = {
  help: { type: 'boolean', short: 'h' },
  json: { type: 'boolean' },
  'base-url': { type: 'string' },
  'api-key-stdin': { type: 'boolean' },
  'form-ids': { type: 'string' },
  'run-type-ids': { type: 'string' },
  'rate-limit': { type: 'string' },
  purge: { type: 'boolean' },
  yes: { type: 'boolean', short: 'y' },
  off: { type: 'string' },
  on: { type: 'string' },
} as const;

const VERBS = ['add', 'list', 'pause', 'resume', 'rotate-key', 'remove', 'streams'];

type Values = ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true; strict: true }>>['values'];

/** What the command was asked, checked before the warehouse is opened. */
interface Request {
  verb: string;
  key: string | undefined;
  values: Values;
  change: StreamsChangeInput | undefined;
  apiKey: string | undefined;
  toAdd: NewCompany | undefined;
}

export async function runCompaniesCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args, options: OPTIONS, allowPositionals: true, strict: true });
  const [verb, key, ...extra] = positionals;
  if (values.help || !verb) {
    process.stdout.write(USAGE);
    return values.help ? 0 : 2;
  }
  checkArguments(verb, key, extra, values);
  const change = verb === 'streams' ? streamsChange(values) : undefined;

  // Everything the command is given is checked before the warehouse is opened.
  const apiKey = values['api-key-stdin'] ? await readApiKey(verb) : undefined;
  const toAdd = verb === 'add' ? companyToAdd(key, values, apiKey) : undefined;
  const request: Request = { verb, key, values, change, apiKey, toAdd };
  if (!(await purgeConfirmed(request))) return 1;

  const app = new App(loadConfig(), log);
  try {
    process.stdout.write(`${await runVerb(app, request)}\n`);
    return 0;
  } finally {
    await app.stop();
  }
}

/** Refuses a verb, a missing or extra argument, or an option that does not go with the verb. */
function checkArguments(verb: string, key: string | undefined, extra: string[], values: Values): void {
  if (!VERBS.includes(verb)) throw new UsageError(`companies: unknown subcommand "${verb}"\n${USAGE}`);
  if (verb !== 'list' && !key) throw new UsageError(`companies ${verb}: name the company KEY`);
  if (extra.length > 0) throw new UsageError(`companies ${verb}: unexpected argument "${extra[0]}"`);
  if ((verb === 'add' || verb === 'rotate-key') && !values['api-key-stdin'])
    throw new UsageError(`companies ${verb}: give the API key on standard input with --api-key-stdin`);
  if (verb !== 'streams' && (values.off !== undefined || values.on !== undefined))
    throw new UsageError(`companies ${verb}: --off and --on go with companies streams`);
}

async function readApiKey(verb: string): Promise<string> {
  const parsed = parseApiKey({ apiKey: await readStdin() });
  if (!parsed.ok)
    throw new UsageError(`companies ${verb}: the API key on standard input: ${parsed.error.replace(/^apiKey: /, '')}`);
  return parsed.value;
}

function companyToAdd(key: string | undefined, values: Values, apiKey: string | undefined): NewCompany {
  const parsed = parseNewCompany({
    key,
    baseUrl: values['base-url'],
    apiKey,
    formIds: values['form-ids'],
    runTypeIds: values['run-type-ids'],
    rateLimit: values['rate-limit'],
  });
  if (!parsed.ok) throw new UsageError(`companies add: ${optionName(parsed.error)}`);
  return parsed.value;
}

/** False, once it has said so, when a purge was not confirmed; true when there is none or it was. */
async function purgeConfirmed({ verb, key, values, change }: Request): Promise<boolean> {
  if (verb === 'remove' && values.purge && !(await confirmPurge(verb, key!, !!values.yes, everyRow(key!)))) {
    process.stderr.write(`companies remove ${key}: not confirmed; nothing was removed\n`);
    return false;
  }
  if (change && 'off' in change && change.purge) {
    const rows = `company ${key}'s rows of ${change.off.join(', ')} for good`;
    if (!(await confirmPurge(verb, key!, !!values.yes, rows))) {
      process.stderr.write(`companies streams ${key}: not confirmed; nothing was changed\n`);
      return false;
    }
  }
  return true;
}

/** Does what the verb says and returns the line that says it is done. */
async function runVerb(app: App, { verb, key, values, change, apiKey, toAdd }: Request): Promise<string> {
  const admin = await app.companyAdmin();
  const by = cliActor();
  const within = `${app.config.companiesRefreshMs / 1000} s`;
  switch (verb) {
    case 'list':
      return listing(await admin.list(), !!values.json);
    case 'add': {
      const added = await admin.add(by, toAdd!);
      return `company ${added.key} added; running processes start its first runs within ${within}`;
    }
    case 'pause':
      await admin.pause(by, key!);
      return `company ${key} paused; its runs stop after the page in flight`;
    case 'resume':
      await admin.resume(by, key!);
      return `company ${key} resumed`;
    case 'streams':
      return await switchStreams(admin, key!, change!, app.config.companiesRefreshMs);
    case 'rotate-key':
      await admin.rotateKey(by, key!, apiKey!);
      return `company ${key}: API key replaced; running processes send the new one within ${within}`;
    default: {
      const { purged } = await admin.remove(by, key!, { purge: !!values.purge });
      const rows = purged ? Object.values(purged).reduce((a, b) => a + b, 0) : 0;
      return `company ${key} removed${purged ? `; ${rows} rows purged from ${Object.keys(purged).length} tables` : '; its rows stay (--purge deletes them)'}`;
    }
  }
}

/** The companies as JSON or one line each; the trailing line break is the caller's. */
function listing(list: CompanyRecord[], json: boolean): string {
  if (json) return JSON.stringify(list.map(companyView), null, 2);
  return list.length ? list.map(row).join('\n') : 'no companies';
}

const everyRow = (key: string) => `every row of company ${key} from every table`;

/** The wire's field names as the CLI's options: `baseUrl: …` → `--base-url: …`. */
function optionName(error: string): string {
  const names: Record<string, string> = {
    key: 'KEY',
    baseUrl: '--base-url',
    apiKey: 'the API key',
    formIds: '--form-ids',
    runTypeIds: '--run-type-ids',
    rateLimit: '--rate-limit',
  };
  return error.replace(/^(\w+):/, (_m, field: string) => `${names[field] ?? field}:`);
}
