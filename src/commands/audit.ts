import { parseArgs } from 'node:util';
import { App } from '../app/index.ts';
import { loadConfig } from '../config.ts';
import { log } from '../log.ts';
import { listAudit, type AuditRow } from '../warehouse/audit.ts';
import { COMPANY_KEY } from '../warehouse/company-records.ts';
import { parseSince } from './timeline.ts';
import { UsageError } from './usage-error.ts';

const USAGE = `usage: wfsync audit [--company KEY] [--actor A] [--since T] [--limit N] [--json]

Every change made from the CLI, the dashboard or the API, newest first: when, who (cli:<user>, oidc:<e-mail>,
token:<name>, system), what, to which company and target, and the outcome (done, refused and why, failed).
--actor takes an actor (cli:ann) or a kind of actor (token:); --since an ISO date or time, or a duration back
from now (90m, 12h, 7d).
`;

function line(a: AuditRow): string {
  return [
    a.at.toISOString().replace('T', ' ').slice(0, 19),
    a.actor.padEnd(24),
    a.action.padEnd(20),
    (a.company_key ?? '-').padEnd(12),
    a.outcome.padEnd(8),
    [a.target, a.reason].filter(Boolean).join(': '),
  ]
    .join(' ')
    .trimEnd();
}

export async function runAuditCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    options: {
      help: { type: 'boolean', short: 'h' },
      json: { type: 'boolean' },
      company: { type: 'string' },
      actor: { type: 'string' },
      since: { type: 'string' },
      limit: { type: 'string' },
    },
    allowPositionals: true,
    strict: true,
  });
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  if (positionals.length) throw new UsageError(`audit: unexpected argument "${positionals[0]!.slice(0, 40)}"`);
  if (values.company !== undefined && !COMPANY_KEY.test(values.company))
    throw new UsageError(`audit: --company "${values.company.slice(0, 40)}": letters, digits, - or _, at most 40`);
  if (values.actor !== undefined && (!values.actor || values.actor.length > 300 || /\p{Cc}/u.test(values.actor)))
    throw new UsageError('audit: --actor: expected an actor such as cli:ann or token:');
  if (values.limit !== undefined && !/^\d{1,5}$/.test(values.limit))
    throw new UsageError(`audit: --limit "${values.limit.slice(0, 20)}": expected a whole number up to 99999`);
  const since = values.since === undefined ? undefined : parseSince(values.since);
  const limit = values.limit === undefined ? 200 : Number(values.limit);

  const app = new App(loadConfig(), log);
  try {
    const rows = await listAudit(await app.warehouse(), {
      company: values.company,
      actor: values.actor,
      since,
      limit,
    });
    if (values.json) process.stdout.write(`${JSON.stringify(rows)}\n`);
    else process.stdout.write(rows.length ? `${rows.map(line).join('\n')}\n` : 'nothing recorded\n');
    return 0;
  } finally {
    await app.stop();
  }
}
