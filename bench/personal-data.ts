import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { cpuUsage } from 'node:process';
import { loadavg } from 'node:os';
import { startSandbox, type SandboxSize } from '../src/sandbox/index.ts';
import { httpResponse } from '../src/source/http.ts';
import { parseJson } from '../src/source/json-body.ts';
import { parseItems, readContainer } from '../src/source/paging.ts';
import { personalData } from '../src/resources/index.ts';
import { runStreams, selectStreams } from '../src/sync/runner.ts';
import { openWarehouse, type Warehouse } from '../src/warehouse/connection.ts';
import { writePage } from '../src/warehouse/upsert.ts';
import { setPersonalDataPolicy } from '../src/warehouse/personal-data/admin.ts';
import { personalHmac, wrappedContentHash } from '../src/warehouse/personal-data/hmac.ts';
import { startPostgres } from '../test/support/services.ts';
import { openTestSync } from '../test/support/sync-context.ts';
import { recordPages, type Recorded } from './recorded-pages.ts';
import { targetOfEndpoint } from './sandbox-backfill.ts';

/**
 * Personal data, two costs. Prints one JSON object.
 *
 *   rowPath   the row path of pages of individuals and of shift assignments recorded from a sandbox of BENCH_SIZE
 *             (default medium; BENCH_PAGES a list, default 20): the sync's parse, validation and writePage (mapping,
 *             fingerprint, the policy, encoding, the page's transaction) into a durable embedded Postgres, for a
 *             company that keeps every field and one with four fields hashed or blocked (PrimaryEmailAddress hash,
 *             DateOfBirth, HomeAddressLine1, MobilePhoneNumber block; on shifts, FirstName and LastName hash,
 *             EmployeeNumber and MobilePhoneNumber block, the fields their pages carry), and one keeping every
 *             field of the same pages with each hashed field's values as wide as a hash (`keepWide`: the width's
 *             share; `extraOverWidePercent` is the policy's extra beyond it), their pages written alternately,
 *             each after a full collection (a list of fewer than BENCH_PAGES_PER_ROUND responses, such as
 *             individuals, which is one, by as many triples of such companies). Time on a CPU of the sync's main
 *             thread and of Postgres per 200 records, median of BENCH_ROUNDS rounds (default 10; the extra in
 *             percent is the median of each round's ratio), each under a key new to the process, of three passes:
 *             `firstSight` (every row inserted, every value hashed for the first time: a first sync), `changed`
 *             (every record with a field added: new content, values hashed before: an incremental sync) and
 *             `unchanged` (the same again).
 *   rewrite   a company synced from a sandbox of BENCH_SIZE into a private Postgres, then the same four fields of
 *             individuals set: rows rewritten per second by the policy change, with no request to the service.
 *
 *   npm run bench:personal-data            BENCH_SIZE=small npm run bench:personal-data
 *   BENCH_REWRITE=0 npm run bench:personal-data     (the row path alone)
 */

const SIZE = (process.env.BENCH_SIZE ?? 'medium') as SandboxSize;
const PAGES = Number(process.env.BENCH_PAGES ?? '20');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? '10');
/**
 * Pages each kind of company writes a pass, at least: a list of fewer responses (individuals is one) is written
 * by that many triples of companies, each a keeping company, one under the four fields and one keeping wide values.
 */
const PAGES_PER_ROUND = Number(process.env.BENCH_PAGES_PER_ROUND ?? '10');
const KEY = 'bench-personal-data-key';

const individualsPolicy: Record<string, 'hash' | 'block'> = {
  PrimaryEmailAddress: 'hash',
  DateOfBirth: 'block',
  HomeAddressLine1: 'block',
  MobilePhoneNumber: 'block',
};
const POLICIES: Record<string, Record<string, 'hash' | 'block'>> = {
  individuals: individualsPolicy,
  shiftAssignments: { FirstName: 'hash', LastName: 'hash', EmployeeNumber: 'block', MobilePhoneNumber: 'block' },
};

const round = (x: number, digits = 2) => Math.round(x * 10 ** digits) / 10 ** digits;
const cpuUs = () => {
  const u = cpuUsage();
  return u.user + u.system;
};

/**
 * Time on a CPU, in µs, from the scheduler's own count (`/proc/…/schedstat`, nanoseconds): the sync's main thread,
 * which runs its JavaScript and the collections V8 does on it (not V8's helper threads, whose work for one page
 * lands on whichever page runs next), and every Postgres process.
 */
const runUs = (path: string) => Number(readFileSync(path, 'utf8').split(' ')[0]) / 1000;
const mainThreadUs = () => runUs(`/proc/self/task/${process.pid}/schedstat`);
function postgresRunUs(dataDir: string): number {
  const pid = Number(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8')
    .trim()
    .split(/\s+/)
    .filter(Boolean)
    .map(Number);
  return children.reduce(
    (sum, c) => {
      try {
        return sum + runUs(`/proc/${c}/schedstat`);
      } catch {
        return sum; // a process that ended meanwhile
      }
    },
    runUs(`/proc/${pid}/schedstat`),
  );
}

/**
 * A full collection before each company's page, outside its time: a page pays for the collections its own
 * allocations call for, not for what the page before it (the other company's) left behind. Run with
 * --expose-gc (the npm script does).
 */
const collectGarbage = (globalThis as { gc?: () => void }).gc ?? (() => {});

/** CPU per page's worth of records (200): the individuals list comes in one response, whatever its size. */
interface Cost {
  syncMsPerPage: number;
  postgresMsPerPage: number;
}

const PAGE_RECORDS = 200;

/**
 * Companies' passes over the recorded pages, as their syncs read and write them, page by page, one company after
 * another (the order rotating from page to page, and with `flip` from round to round): whatever slows the machine
 * for a while slows every company's share alike. CPU per page for each company.
 */
async function passes(
  wh: Warehouse,
  dataDir: string,
  companies: readonly { key: string; rec: Recorded }[],
  flip = 0,
): Promise<Cost[]> {
  const target = targetOfEndpoint(companies[0]!.rec.name);
  const syncedAt = new Date();
  // What earlier passes left for the server's background work is done now, not inside these.
  await wh.sql`vacuum analyze`;
  await wh.sql`checkpoint`;
  const sync = companies.map(() => 0);
  const postgres = companies.map(() => 0);
  let records = 0;
  for (const i of companies[0]!.rec.bodies.keys()) {
    // Each company takes each place in rotation, page after page: none is always first or always after another.
    const order = companies.map((_, k) => (k + i + flip) % companies.length);
    for (const k of order) {
      const { key, rec } = companies[k]!;
      collectGarbage();
      const pg0 = postgresRunUs(dataDir);
      const t0 = mainThreadUs();
      const c = readContainer(rec.endpoint, parseJson(rec.name, httpResponse(200, {}, rec.bodies[i]!)));
      const { items, rejects } = parseItems(rec.endpoint.item, c.raw);
      await writePage(wh, {
        target,
        companyKey: key,
        stream: rec.name,
        items: items as object[],
        rejects,
        extras: c.extras,
        syncedAt,
      });
      sync[k] = sync[k]! + mainThreadUs() - t0;
      postgres[k] = postgres[k]! + postgresRunUs(dataDir) - pg0;
    }
    const { rec } = companies[0]!;
    records += readContainer(rec.endpoint, parseJson(rec.name, httpResponse(200, {}, rec.bodies[i]!))).raw.length;
  }
  const n = records / PAGE_RECORDS;
  return companies.map((_, k) => ({ syncMsPerPage: sync[k]! / 1000 / n, postgresMsPerPage: postgres[k]! / 1000 / n }));
}

/** Companies' costs taken together: a round's pairs of companies. */
const mean = (costs: Cost[]): Cost => ({
  syncMsPerPage: costs.reduce((a, c) => a + c.syncMsPerPage, 0) / costs.length,
  postgresMsPerPage: costs.reduce((a, c) => a + c.postgresMsPerPage, 0) / costs.length,
});

/** A quantile, between the two nearest rounds. */
function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (sorted.length - 1) * q;
  const below = Math.floor(at);
  return sorted[below]! + (sorted[Math.ceil(at)]! - sorted[below]!) * (at - below);
}

/** The median round: rounds on a shared machine meet other work now and then. */
const median = (values: number[]) => quantile(values, 0.5);
const sum = (costs: Cost[]) => ({
  syncMsPerPage: round(median(costs.map((c) => c.syncMsPerPage))),
  postgresMsPerPage: round(median(costs.map((c) => c.postgresMsPerPage))),
});
/**
 * The extra of the four fields in percent: the median of each round's own ratio, so that what slows a whole round
 * (other work on the machine) slows both of its companies and cancels out.
 */
const extra = (none: Cost[], four: Cost[]) => {
  const ratios = (pick: (c: Cost) => number) => four.map((f, i) => pick(f) / pick(none[i]!));
  const percent = (r: number) => round((r - 1) * 100, 1);
  const both = ratios((c) => c.syncMsPerPage + c.postgresMsPerPage);
  return {
    sync: percent(median(ratios((c) => c.syncMsPerPage))),
    postgres: percent(median(ratios((c) => c.postgresMsPerPage))),
    both: percent(median(both)),
    /** The middle half of the rounds' own figures for `both`: how far one round is from the next. */
    bothQuartiles: [percent(quantile(both, 0.25)), percent(quantile(both, 0.75))],
  };
};

/** What each pass writes: the pages as recorded, or each record with one field the service added (new content). */
const PASSES = {
  /** Every row inserted; every value and content hash hashed for the first time (a first sync). */
  firstSight: (rec: Recorded) => rec,
  /** Every row updated with a new version; its values hashed before, its content new (an incremental sync). */
  changed: (rec: Recorded) => revised(rec),
  /** Every row as stored (a full refresh finding nothing changed). */
  unchanged: (rec: Recorded) => revised(rec),
} as const;

/** The same pages with a field unknown to the schema added to every record: it lands in `_extra`. */
function revised(rec: Recorded): Recorded {
  const bodies = rec.bodies.map((b) => {
    const body = JSON.parse(b.toString('utf8')) as unknown[] | { Data: unknown[] };
    for (const item of Array.isArray(body) ? body : body.Data) (item as Record<string, unknown>).BenchRevision = 1;
    return Buffer.from(JSON.stringify(body));
  });
  return { ...rec, bodies };
}

/**
 * The same pages with every value of a hashed field as wide as its hash (64 hex digits; equal values stay equal):
 * what storing hashes costs, without the policy that makes them.
 */
function widened(rec: Recorded, fields: ReadonlySet<string>): Recorded {
  const widen = (v: unknown): void => {
    if (Array.isArray(v)) {
      v.forEach(widen);
      return;
    }
    if (v === null || typeof v !== 'object') return;
    const o = v as Record<string, unknown>;
    for (const [k, x] of Object.entries(o)) {
      if (fields.has(k) && typeof x === 'string') o[k] = createHash('sha256').update(x).digest('hex');
      else widen(x);
    }
  };
  const bodies = rec.bodies.map((b) => {
    const body = JSON.parse(b.toString('utf8')) as unknown;
    widen(body);
    return Buffer.from(JSON.stringify(body));
  });
  return { ...rec, bodies };
}

/**
 * Each round, under a key of its own (so nothing was hashed before): a company keeping every field, one under the
 * stream's four, and one keeping every field of pages whose hashed fields are as wide as hashes (the width's share
 * of the extra), each pass page by page, one after another.
 */
async function rowPath(url: string, dataDir: string, rec: Recorded, policy: Record<string, 'hash' | 'block'>) {
  const names = Object.keys(PASSES) as (keyof typeof PASSES)[];
  const pages = Object.fromEntries(names.map((n) => [n, PASSES[n](rec)])) as Record<keyof typeof PASSES, Recorded>;
  const hashed = new Set(Object.keys(policy).filter((f) => policy[f] === 'hash'));
  const widePages = Object.fromEntries(names.map((n) => [n, PASSES[n](widened(rec, hashed))])) as Record<
    keyof typeof PASSES,
    Recorded
  >;
  const figures = Object.fromEntries(
    names.map((n) => [n, { none: [] as Cost[], four: [] as Cost[], wide: [] as Cost[] }]),
  );
  const triples = Math.max(1, Math.ceil(PAGES_PER_ROUND / rec.bodies.length));
  for (let r = 0; r < ROUNDS; r++) {
    const wh = await openWarehouse({ databaseUrl: url, personalDataKey: `${KEY}-${rec.name}-${r}` });
    try {
      const nones = Array.from({ length: triples }, (_, j) => `keep-${rec.name}-${r}-${j}`);
      const fours = Array.from({ length: triples }, (_, j) => `four-${rec.name}-${r}-${j}`);
      const wides = Array.from({ length: triples }, (_, j) => `wide-${rec.name}-${r}-${j}`);
      const warm = `warm-${rec.name}-${r}`;
      const keys = [...nones, ...fours, ...wides, warm];
      const companies = keys.map((k) => ({ company_key: k, base_url: 'http://bench', api_key_sealed: 'v1.bench' }));
      await wh.sql`insert into ${wh.sql(wh.schema)}.companies ${wh.sql(companies)}`;
      for (const four of fours) await setPersonalDataPolicy(wh, personalData, four, policy);
      // A new client's sessions pay for what a server caches per session on their first pages: not this bench's.
      await passes(wh, dataDir, [{ key: warm, rec }]);
      for (const n of names) {
        const lineUp = nones.flatMap((none, j) => [
          { key: none, rec: pages[n] },
          { key: fours[j]!, rec: pages[n] },
          { key: wides[j]!, rec: widePages[n] },
        ]);
        const costs = await passes(wh, dataDir, lineUp, r);
        figures[n]!.none.push(mean(costs.filter((_, i) => i % 3 === 0)));
        figures[n]!.four.push(mean(costs.filter((_, i) => i % 3 === 1)));
        figures[n]!.wide.push(mean(costs.filter((_, i) => i % 3 === 2)));
      }
    } finally {
      await wh.close();
    }
  }
  const byPass = Object.fromEntries(
    names.map((n) => {
      const { none, four, wide } = figures[n]!;
      const byRound = (costs: Cost[]) => costs.map((c) => [round(c.syncMsPerPage), round(c.postgresMsPerPage)]);
      return [
        n,
        {
          none: sum(none),
          fourFields: sum(four),
          keepWide: sum(wide),
          extraPercent: extra(none, four),
          /** The same company's extra over pages already as wide as its hashes: what the policy costs beyond their width. */
          extraOverWidePercent: extra(wide, four),
          byRound: { none: byRound(none), fourFields: byRound(four), keepWide: byRound(wide) },
        },
      ];
    }),
  );
  const records = rec.bodies.reduce(
    (n, b) => n + readContainer(rec.endpoint, parseJson(rec.name, httpResponse(200, {}, b))).raw.length,
    0,
  );
  return { responses: rec.bodies.length, records, ...byPass };
}

/**
 * CPU of one keyed hash of a value never hashed before: what a first sight pays at least once a row (its content
 * hash is keyed) and once for each distinct value of a hashed field.
 */
function hmacUsPerValue(): number {
  const values = Array.from({ length: 100_000 }, (_, i) => `someone.${i}@example.com`);
  const hmac = personalHmac(`${KEY}-alone`);
  const t0 = cpuUs();
  for (const v of values) hmac.of(v);
  return round((cpuUs() - t0) / values.length, 3);
}

/** CPU of keying one content hash never keyed before: what a first sight or a changed record pays once a row. */
function wrapUsPerRow(): number {
  const hashes = Array.from({ length: 100_000 }, (_, i) =>
    createHash('sha256').update(String(i)).digest('hex').slice(0, 32),
  );
  const hmac = personalHmac(`${KEY}-wrap`);
  const t0 = cpuUs();
  for (const h of hashes) wrappedContentHash(hmac, h);
  return round((cpuUs() - t0) / hashes.length, 3);
}

const out: Record<string, unknown> = {
  size: SIZE,
  hmacUsPerValue: hmacUsPerValue(),
  wrapUsPerRow: wrapUsPerRow(),
  pagesPerList: PAGES,
  rounds: ROUNDS,
  loadavg: loadavg().map((l) => round(l)),
};
{
  const lists = (process.env.BENCH_LISTS ?? 'individuals,shiftAssignments').split(',');
  const recorded = await recordPages({ size: SIZE, pages: PAGES, lists });
  const pg = await startPostgres({ durable: true });
  try {
    const wh = await openWarehouse({ databaseUrl: pg.url });
    await wh.migrate();
    await wh.close();
    const results: Record<string, unknown> = {};
    for (const rec of recorded) results[rec.name] = await rowPath(pg.url, pg.dataDir, rec, POLICIES[rec.name]!);
    out.rowPath = results;
  } finally {
    await pg.stop();
  }
}

if (process.env.BENCH_REWRITE !== '0') await rewrite();
process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);

/** A first sync of one company, then the four fields of individuals set: the stored rows rewritten. */
async function rewrite(): Promise<void> {
  const sandbox = await startSandbox({ port: 0, seed: 7, size: SIZE, rateLimit: null });
  const pg = await startPostgres({ durable: true });
  const sync = await openTestSync(sandbox, {
    databaseUrl: pg.url,
    personalDataKey: KEY,
    companyKey: 'bench',
    rateLimit: { limit: 1_000_000, periodMs: 1000 },
  });
  const { ctx, warehouse: wh } = sync;
  try {
    await wh.sql`insert into ${wh.sql(wh.schema)}.companies (company_key, base_url, api_key_sealed) values ('bench', ${sandbox.url}, 'v1.bench')`;
    const synced = await runStreams(ctx, selectStreams());
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
    await sync.close();
    await pg.stop();
    await sandbox.close();
  }
}
