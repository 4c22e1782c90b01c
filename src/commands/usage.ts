import { parseArgs } from 'node:util';
import { App } from '../app/index.ts';
import { loadConfig } from '../config.ts';
import { log } from '../log.ts';
import { COMPANY_KEY } from '../warehouse/company-records.ts';
import { readUsage } from '../warehouse/usage.ts';
import { UsageError } from './usage-error.ts';

const USAGE = `usage: wfsync usage [--company KEY] [--since YYYY-MM-DD] [--json]

Requests sent to the service per UTC day, company and stream (since 30 days ago unless --since says), from the
warehouse's usage_daily table: each run adds its requests as it ends, and the counts stay when runs are pruned.
`;

export async function runUsageCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    options: {
      help: { type: 'boolean', short: 'h' },
      json: { type: 'boolean' },
      company: { type: 'string' },
      since: { type: 'string' },
    },
    allowPositionals: true,
    strict: true,
  });
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  if (positionals.length) throw new UsageError(`usage: unexpected argument "${positionals[0]}"`);
  if (values.company !== undefined && !COMPANY_KEY.test(values.company))
    throw new UsageError(`--company "${values.company.slice(0, 40)}": letters, digits, - or _, at most 40`);
  const since = values.since ?? new Date(Date.now() - 29 * 86_400_000).toISOString().slice(0, 10);
  if (!/^\d{4}-\d{2}-\d{2}$/.test(since) || Number.isNaN(Date.parse(since)))
    throw new UsageError(`--since "${since.slice(0, 40)}": expected a day such as 2026-11-01`);

  const app = new App(loadConfig(), log);
  try {
    const days = await readUsage(await app.warehouse(), { company: values.company, since });
    if (values.json) process.stdout.write(`${JSON.stringify(days)}\n`);
    else if (days.length === 0) process.stdout.write(`no requests recorded since ${since}\n`);
    else {
      const lines = days.map(
        (d) =>
          `${d.day}  ${d.company.padEnd(16)} ${d.stream.padEnd(26)} ${String(d.requests).padStart(8)} requests ${String(d.runs).padStart(5)} runs`,
      );
      const total = days.reduce((n, d) => n + d.requests, 0);
      process.stdout.write(`${lines.join('\n')}\n${total} requests in all\n`);
    }
    return 0;
  } finally {
    await app.stop();
  }
}
