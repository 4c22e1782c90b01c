import { parseArgs } from 'node:util';
import { App } from '../app/index.ts';
import { loadConfig } from '../config.ts';
import { log } from '../log.ts';
import { COMPANY_KEY } from '../warehouse/company-records.ts';
import { listEvents, type EventRow } from '../warehouse/events.ts';
import { UsageError } from './usage-error.ts';

const USAGE = `usage: wfsync timeline COMPANY [--since T] [--limit N] [--json]

What happened to a company, newest first: added, paused, resumed, key rotated, removed; a stream starting to
fail and recovering; re-syncs asked for and finished; migrations and version changes at start. --since takes an
ISO date or time (2026-11-01, 2026-11-01T06:00Z) or a duration back from now (90m, 12h, 7d).
`;

/** An ISO date or time, or a duration back from now (`30m`, `12h`, `7d`). */
export function parseSince(text: string, now = Date.now()): Date {
  const back = /^(\d{1,6})([mhd])$/.exec(text);
  if (back)
    return new Date(now - Number(back[1]) * { m: 60_000, h: 3_600_000, d: 86_400_000 }[back[2] as 'm' | 'h' | 'd']);
  const at = /^\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(text)
    ? new Date(text)
    : new Date(Number.NaN);
  if (Number.isNaN(at.getTime()))
    throw new UsageError(
      `--since "${text.slice(0, 40)}": expected an ISO date or time, or a duration such as 12h or 7d`,
    );
  return at;
}

function line(e: EventRow): string {
  const detail = e.detail
    ? Object.entries(e.detail)
        .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
        .join(' ')
    : '';
  return [
    e.happened_at.toISOString().replace('T', ' ').slice(0, 19),
    e.event.padEnd(18),
    (e.stream ?? '').padEnd(26),
    e.actor ? `by ${e.actor}` : '',
    detail,
  ]
    .join(' ')
    .trimEnd();
}

export async function runTimelineCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    options: {
      help: { type: 'boolean', short: 'h' },
      json: { type: 'boolean' },
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
  const [company, ...extra] = positionals;
  if (!company) throw new UsageError(`timeline: name the COMPANY\n${USAGE}`);
  if (!COMPANY_KEY.test(company))
    throw new UsageError(`timeline: company "${company.slice(0, 40)}": letters, digits, - or _, at most 40`);
  if (extra.length) throw new UsageError(`timeline: unexpected argument "${extra[0]}"`);
  const since = values.since === undefined ? undefined : parseSince(values.since);
  if (values.limit !== undefined && !/^\d{1,5}$/.test(values.limit))
    throw new UsageError(`--limit "${values.limit.slice(0, 20)}": expected a whole number up to 99999`);
  const limit = values.limit === undefined ? 200 : Number(values.limit);

  const app = new App(loadConfig(), log);
  try {
    const events = await listEvents(await app.warehouse(), { companyKey: company, since, limit });
    if (values.json) process.stdout.write(`${JSON.stringify(events)}\n`);
    else if (events.length === 0)
      process.stdout.write(`company ${company}: nothing recorded${since ? ` since ${since.toISOString()}` : ''}\n`);
    else process.stdout.write(`${events.map(line).join('\n')}\n`);
    return 0;
  } finally {
    await app.stop();
  }
}
