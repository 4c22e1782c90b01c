import { cpuUsage } from 'node:process';
import { loadavg } from 'node:os';
import { pino } from 'pino';
import { startSandbox, type SandboxSize } from '../src/sandbox/index.ts';
import { SourceClient } from '../src/source/client.ts';
import { createRateLimiter } from '../src/ratelimit/index.ts';
import { clockProbe, personalData, streamByName, type EndpointName } from '../src/resources/index.ts';
import { runStreams, selectStreams } from '../src/sync/runner.ts';
import type { SyncContext } from '../src/sync/context.ts';
import { openWarehouse } from '../src/warehouse/connection.ts';
import { fingerprintPage } from '../src/warehouse/fingerprint.ts';
import { mapPage } from '../src/warehouse/page-map.ts';
import { applyPolicy } from '../src/warehouse/personal-data/apply.ts';
import { personalHmac } from '../src/warehouse/personal-data/hmac.ts';
import type { CompanyPolicy } from '../src/warehouse/personal-data/policy.ts';
import { setPersonalDataPolicy } from '../src/warehouse/personal-data/admin.ts';
import { startPostgres } from '../test/support/services.ts';

/**
 * Personal data, two costs. Prints one JSON object.
 *
 *   rowPath   CPU of this process per page (200 records) of individuals and of shift assignments: mapping and
 *             fingerprinting alone, against the same with four fields hashed or blocked applied after them
 *             (PrimaryEmailAddress hash, DateOfBirth, HomeAddressLine1, MobilePhoneNumber block; on shifts,
 *             FirstName hash and EmployeeNumber block, the fields their pages carry).
 *   rewrite   a company synced from a sandbox of BENCH_SIZE (default small) into a private Postgres, then the same
 *             four fields set: rows rewritten per second by the policy change, with no request to the service.
 *
 *   npm run bench:personal-data            BENCH_SIZE=medium npm run bench:personal-data
 *   BENCH_REWRITE=0 npm run bench:personal-data     (the row path alone)
 */

const SIZE = (process.env.BENCH_SIZE ?? 'small') as SandboxSize;
const PAGE = 200;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? '30');
const KEY = 'bench-personal-data-key';

const individualsPolicy: Record<string, 'hash' | 'block'> = {
  PrimaryEmailAddress: 'hash',
  DateOfBirth: 'block',
  HomeAddressLine1: 'block',
  MobilePhoneNumber: 'block',
};
const shiftsPolicy: Record<string, 'hash' | 'block'> = { FirstName: 'hash', LastName: 'hash', EmployeeNumber: 'block', MobilePhoneNumber: 'block' };

/** A policy under its own key each time `fresh`: no value hashed before (a first sync), else the bench's key. */
let keys = 0;
function policyOf(actions: Record<string, 'hash' | 'block'>, fresh: boolean): CompanyPolicy {
  return { companyKey: 'bench', version: '1:0', actions: new Map(Object.entries(actions)), suppressed: new Set(), hmac: personalHmac(fresh ? `${KEY}-${keys++}` : KEY) };
}

/**
 * CPU µs per page of mapping and fingerprinting, without and with the policy, alternated round by round. `fresh`:
 * every value is hashed for the first time (a first sync, or values never seen); else the values of these pages
 * were hashed before (a later sync reading the same people again).
 */
function rowPath(stream: string, records: readonly object[], actions: Record<string, 'hash' | 'block'>, fresh: boolean) {
  const target = streamByName(stream)!.target;
  const pages: object[][] = [];
  for (let i = 0; i + PAGE <= records.length && pages.length < 20; i += PAGE) pages.push(records.slice(i, i + PAGE));
  const cpu = { none: 0, policy: 0 };
  const once = (withPolicy: boolean) => {
    const start = cpuUsage();
    for (const items of pages) {
      const page = mapPage(target, items, { companyKey: 'bench' });
      fingerprintPage(page);
      if (withPolicy) applyPolicy(page, [], policyOf(actions, fresh));
    }
    const used = cpuUsage(start);
    return used.user + used.system;
  };
  for (let r = 0; r < 3; r++) (once(false), once(true));
  for (let r = 0; r < ROUNDS; r++) {
    cpu.none += once(false);
    cpu.policy += once(true);
  }
  const perPage = (us: number) => Math.round(us / ROUNDS / pages.length);
  return { pages: pages.length, recordsPerPage: PAGE, cpuUsPerPage: { none: perPage(cpu.none), fourFields: perPage(cpu.policy) }, extraPercent: Math.round((cpu.policy / cpu.none - 1) * 1000) / 10 };
}

const sandbox = await startSandbox({ port: 0, seed: 7, size: SIZE, rateLimit: null });
const truth = (e: EndpointName) => sandbox.data.truth(e);
const out: Record<string, unknown> = { size: SIZE, loadavg: loadavg().map((l) => Math.round(l * 100) / 100) };
out.rowPath = Object.fromEntries(
  (['seenBefore', 'firstTime'] as const).map((when) => [
    when,
    {
      individuals: rowPath('individuals', truth('individuals'), individualsPolicy, when === 'firstTime'),
      shiftAssignments: rowPath('shift-assignments', truth('shiftAssignments'), shiftsPolicy, when === 'firstTime'),
    },
  ]),
);

if (process.env.BENCH_REWRITE === '0') {
  await sandbox.close();
  process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
  process.exit(0);
}

const pg = await startPostgres();
const wh = await openWarehouse({ databaseUrl: pg.url, personalDataKey: KEY });
try {
  await wh.migrate();
  await wh.sql`insert into ${wh.sql(wh.schema)}.companies (company_key, base_url, api_key_sealed) values ('bench', ${sandbox.url}, 'v1.bench')`;
  const limiter = createRateLimiter({ rateLimit: { limit: 1_000_000, windowMs: 1000 } });
  const client = new SourceClient({ baseUrl: sandbox.url, apiKey: sandbox.apiKey, limiter });
  const ctx: SyncContext = {
    companyKey: 'bench',
    client,
    warehouse: wh,
    log: pino({ level: 'silent' }),
    now: () => client.serviceNow(),
    refreshClock: () => client.freshServiceNow(clockProbe, 0),
    formIds: sandbox.data.formIds(),
    runTypeIds: sandbox.data.runTypeIds(),
  };
  const synced = await runStreams(ctx, selectStreams());
  await client.close();
  await limiter.close();
  const requests = sandbox.stats().requests;
  const started = performance.now();
  const set = await setPersonalDataPolicy(wh, personalData, 'bench', individualsPolicy);
  const seconds = (performance.now() - started) / 1000;
  const counts = set.rewritten.bench!;
  const rows = Object.values(counts).reduce((a, b) => a + b, 0);
  out.rewrite = {
    rowsSynced: synced.rows,
    rowsRewritten: rows,
    byTable: counts,
    seconds: Math.round(seconds * 100) / 100,
    rowsPerSecond: Math.round(rows / seconds),
    requestsWhileApplying: sandbox.stats().requests - requests,
  };
} finally {
  await wh.close();
  await pg.stop();
  await sandbox.close();
}
process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
