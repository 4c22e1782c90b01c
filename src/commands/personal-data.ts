import { parseArgs } from 'node:util';
import { App } from '../app/index.ts';
import { loadConfig } from '../config.ts';
import { log } from '../log.ts';
import { personalData } from '../resources/index.ts';
import { listPersonalData, type PersonalDataListing, type PersonRef } from '../warehouse/personal-data/admin.ts';
import { cliActor } from '../warehouse/audit.ts';
import { DEFAULT_POLICY_KEY } from '../warehouse/personal-data/policy.ts';
import type { RewriteCounts } from '../warehouse/personal-data/rewrite.ts';
import { UsageError } from './usage-error.ts';

const USAGE = `usage:
  wfsync personal-data set COMPANY|--default FIELD=keep|hash|block [FIELD=...]
  wfsync personal-data list [COMPANY] [--json]
  wfsync personal-data apply
  wfsync erase COMPANY --individual SERVICE_ID | --employee-number N [--yes]

set stores the policy, then rewrites the rows already stored (every table, every history version, _extra and
rejects' payloads) before it returns, printing the rows rewritten per table; apply finishes a rewrite that was
interrupted. Fields are the service's (PrimaryEmailAddress, DateOfBirth, PatientCareReportNumber, IncidentAddress,
...), of kind personal (an employee's) or patient (a patient's or health data), and the fields it added once
classified personal or patient (wfsync schema classify). list shows each field with its kind.
erase blocks every personal field of one employee everywhere and keeps their later records blocked; it does not
reach patient fields.
`;

function countsLine(counts: RewriteCounts): string {
  const changed = Object.entries(counts).filter(([, n]) => n > 0);
  return changed.length === 0 ? 'no stored row needed a change' : changed.map(([t, n]) => `${t} ${n}`).join(', ');
}

const nameOf = (p: PersonalDataListing) => (p.company === DEFAULT_POLICY_KEY ? '(default)' : p.company);

function listingLine(p: PersonalDataListing, shown: ReadonlySet<string>): string {
  const fields = Object.entries(p.effective ?? p.fields).filter(([, a]) => a !== 'keep');
  const text = fields.length === 0 ? 'every field kept' : fields.map(([f, a]) => `${f}=${a}`).join(' ');
  const own = Object.entries(p.kinds).filter(([f]) => !shown.has(f));
  const classified = own.length === 0 ? '' : `; classified: ${own.map(([f, k]) => `${f} ${k}`).join(', ')}`;
  return `${nameOf(p).padEnd(16)} ${text}${classified}${p.rewritePending ? '  (rewrite pending: wfsync personal-data apply)' : ''}`;
}

/** Each field with its kind and action: the default's (and each company's fields not kept), or one company's. */
function formatListing(list: readonly PersonalDataListing[], company: string | undefined): string {
  const [defaults, ...companies] = list;
  if (company !== undefined) {
    const p = companies[0]!;
    const head = `${'field'.padEnd(30)} ${'kind'.padEnd(9)} ${'action'.padEnd(7)} set for`;
    const rows = Object.entries(p.kinds).map(([f, kind]) => {
      const by = p.fields[f] ? 'this company' : defaults!.fields[f] ? 'default' : '';
      return `${f.padEnd(30)} ${kind.padEnd(9)} ${(p.effective?.[f] ?? 'keep').padEnd(7)} ${by}`.trimEnd();
    });
    return `${[head, ...rows, '', listingLine(p, new Set(Object.keys(p.kinds)))].join('\n')}\n`;
  }
  const head = `${'field'.padEnd(30)} ${'kind'.padEnd(9)} (default)`;
  const rows = Object.entries(defaults!.kinds).map(
    ([f, kind]) => `${f.padEnd(30)} ${kind.padEnd(9)} ${defaults!.fields[f] ?? 'keep'}`,
  );
  const shown = new Set(Object.keys(defaults!.kinds));
  return `${[head, ...rows, '', ...list.map((p) => listingLine(p, shown))].join('\n')}\n`;
}

/** `FIELD=ACTION` arguments as an object; a malformed one is refused in one line. */
function pairsOf(args: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const a of args) {
    const m = /^([^=]+)=(.*)$/.exec(a);
    if (!m) throw new UsageError(`personal-data set: "${a}" is not FIELD=keep|hash|block`);
    out[m[1]!] = m[2]!;
  }
  return out;
}

export async function runPersonalDataCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    options: { help: { type: 'boolean', short: 'h' }, json: { type: 'boolean' }, default: { type: 'boolean' } },
    allowPositionals: true,
    strict: true,
  });
  const [verb, ...rest] = positionals;
  if (values.help || !verb) {
    process.stdout.write(USAGE);
    return values.help ? 0 : 2;
  }
  if (!['set', 'list', 'apply'].includes(verb)) throw new UsageError(`personal-data: unknown subcommand "${verb}"`);
  const company = verb === 'set' && values.default ? DEFAULT_POLICY_KEY : rest[0];
  const pairs = verb === 'set' ? pairsOf(values.default ? rest : rest.slice(1)) : {};
  if (verb === 'set' && !company) throw new UsageError('personal-data set: name the COMPANY, or --default');
  if (verb === 'list' && rest.length > 1) throw new UsageError(`personal-data list: unexpected argument "${rest[1]}"`);
  if (verb === 'apply' && rest.length > 0)
    throw new UsageError(`personal-data apply: unexpected argument "${rest[0]}"`);

  const app = new App(loadConfig(), log);
  try {
    const wh = await app.warehouse();
    if (verb === 'list') {
      const list = await listPersonalData(wh, personalData, company);
      process.stdout.write(values.json ? `${JSON.stringify(list, null, 2)}\n` : formatListing(list, company));
      return 0;
    }
    const report = (c: string, counts: RewriteCounts) =>
      process.stdout.write(`${c}: rows rewritten: ${countsLine(counts)}\n`);
    if (verb === 'apply') {
      const done = await (await app.companyAdmin()).applyPolicies(cliActor());
      for (const [c, counts] of Object.entries(done)) report(c, counts);
      if (Object.keys(done).length === 0) process.stdout.write('no rewrite pending\n');
      return 0;
    }
    await (await app.companyAdmin()).setPolicy(cliActor(), company!, pairs, report);
    process.stdout.write(
      `${company === DEFAULT_POLICY_KEY ? 'default' : company} policy set: ${Object.entries(pairs)
        .map(([f, a]) => `${f}=${a}`)
        .join(' ')}\n`,
    );
    return 0;
  } finally {
    await app.stop();
  }
}

export async function runEraseCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    options: {
      help: { type: 'boolean', short: 'h' },
      individual: { type: 'string' },
      'employee-number': { type: 'string' },
      yes: { type: 'boolean', short: 'y' },
    },
    allowPositionals: true,
    strict: true,
  });
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  const [company, ...extra] = positionals;
  if (!company) throw new UsageError('erase: name the COMPANY');
  if (extra.length > 0) throw new UsageError(`erase: unexpected argument "${extra[0]}"`);
  const ref = personRef(values.individual, values['employee-number']);
  if (!values.yes) {
    if (!process.stdin.isTTY) throw new UsageError('erase: add --yes to confirm (standard input is not a terminal)');
    const { createInterface } = await import('node:readline/promises');
    const rl = createInterface({ input: process.stdin, output: process.stderr });
    const answer = await rl
      .question(
        `This blocks every personal field of that person in company ${company}, for good. Type the company key to go on: `,
      )
      .finally(() => rl.close());
    if (answer.trim() !== company) {
      process.stderr.write('erase: not confirmed; nothing was changed\n');
      return 1;
    }
  }
  const app = new App(loadConfig(), log);
  try {
    const done = await (await app.companyAdmin()).erase(cliActor(), company, ref);
    process.stdout.write(`erasure ${done.id} of company ${company}: rows rewritten: ${countsLine(done.counts)}\n`);
    return 0;
  } finally {
    await app.stop();
  }
}

function personRef(individual: string | undefined, employeeNumber: string | undefined): PersonRef {
  if ((individual === undefined) === (employeeNumber === undefined))
    throw new UsageError('erase: give one of --individual SERVICE_ID or --employee-number N');
  if (individual !== undefined) {
    if (!/^\d{1,9}$/.test(individual))
      throw new UsageError(`erase: --individual: "${individual}" is not a service id (digits)`);
    return { serviceId: Number(individual) };
  }
  if (!employeeNumber!.trim() || employeeNumber!.length > 100 || /\p{Cc}/u.test(employeeNumber!))
    throw new UsageError('erase: --employee-number: not an employee number');
  return { employeeNumber: employeeNumber! };
}
