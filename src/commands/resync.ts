import { parseArgs } from 'node:util';
import { App } from '../app/index.ts';
import { loadConfig } from '../config.ts';
import { log } from '../log.ts';
import { isStreamName, streams } from '../resources/index.ts';
import { COMPANY_KEY, findCompany } from '../warehouse/company-records.ts';
import { cliActor } from '../warehouse/audit.ts';
import { UsageError } from './usage-error.ts';

const USAGE = `usage: wfsync resync COMPANY STREAM

Reads one stream of one company again from the start, checkpoints ignored: a worker runs it through the queue
(with REDIS_URL), or the running \`wfsync start\` takes it within seconds (without). The rows already written stay
readable throughout; when the read ends, rows the service no longer has are marked deleted. Its progress shows
on the company's page, and the request and its end on its timeline (wfsync timeline COMPANY).
`;

export async function runResyncCommand(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    options: { help: { type: 'boolean', short: 'h' } },
    allowPositionals: true,
    strict: true,
  });
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  const [company, stream, ...extra] = positionals;
  if (!company || !stream) throw new UsageError(`resync: name the COMPANY and the STREAM\n${USAGE}`);
  if (extra.length) throw new UsageError(`resync: unexpected argument "${extra[0]}"`);
  if (!COMPANY_KEY.test(company))
    throw new UsageError(`resync: company "${company.slice(0, 40)}": letters, digits, - or _, at most 40`);
  if (!isStreamName(stream))
    throw new UsageError(
      `resync: stream "${stream.slice(0, 40)}" is not one of ${streams.map((s) => s.name).join(', ')}`,
    );

  const app = new App(loadConfig(), log);
  try {
    if (app.config.redisUrl) await app.reachRedis();
    if (!app.config.companies.some((c) => c.key === company) && !(await findCompany(await app.warehouse(), company))) {
      throw new UsageError(`resync: company ${company} is not added (wfsync companies list)`);
    }
    process.stdout.write(`${await app.resync(company, stream, 'cli', cliActor())}\n`);
    return 0;
  } finally {
    await app.stop();
  }
}
