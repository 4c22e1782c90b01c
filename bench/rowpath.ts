import { PerformanceObserver } from 'node:perf_hooks';
import { loadavg } from 'node:os';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { Endpoint } from '../src/source/endpoints.ts';
import type { EndpointName } from '../src/resources/index.ts';
import { httpResponse } from '../src/source/http.ts';
import { parseJson } from '../src/source/json-body.ts';
import { parseItems, readContainer } from '../src/source/paging.ts';
import { openWarehouse, type Warehouse } from '../src/warehouse/connection.ts';
import { encodePage } from '../src/warehouse/encoding.ts';
import { fingerprintPage } from '../src/warehouse/fingerprint.ts';
import { mapPage, type MappedPage } from '../src/warehouse/page-map.ts';
import { writePage } from '../src/warehouse/upsert.ts';
import { startPostgres } from '../test/support/services.ts';
import { targetOfEndpoint } from './sandbox-backfill.ts';
import { recordPages, type Recorded } from './recorded-pages.ts';
import { dropWarehouse, givenPostgres, postgresCpuSeconds } from './sync-process.ts';

/**
 * The row path stage by stage. Records pages of every synced list from a sandbox (BENCH_SIZE, default medium),
 * at most BENCH_PAGES pages per list (default 40, 0 for all; BENCH_LISTS=a,b for some lists only), then replays them through each stage of the path
 * from a service page to warehouse rows:
 *
 *   parse     the body's bytes to JSON as the client parses them, and its container (envelope or array)
 *   validate  the endpoint's zod schema, record by record
 *   map       records to rows of their target's columns, child rows, keys (mapPage)
 *   fingerprint  the content fingerprint of each row that decides whether a stored row changed
 *   encode    rows to the text Postgres receives
 *   write     writePage into an empty warehouse (a first sync), then the same pages again (nothing changed)
 *
 * CPU of this process is µs per record, by stage and list; allocation is bytes per record (heap growth over one
 * page with no garbage collection in between); Postgres CPU (server and backends, from /proc) is ms per page.
 * The write runs against an embedded Postgres and, when DATABASE_URL is set, against that server too (its
 * role must read `data_directory`, a superuser). Prints one JSON object.
 *
 *   node --max-semi-space-size=8 --min-semi-space-size=8 --import tsx bench/rowpath.ts
 *
 * (the semispaces of bin/wfsync.js, at full size from the start so that one page of a stage fits in them)
 */

const env = (name: string, fallback: string) => process.env[name] ?? fallback;
const SIZE = env('BENCH_SIZE', 'medium');
const PAGES = Number(env('BENCH_PAGES', '40'));
const LISTS = env('BENCH_LISTS', '')
  .split(',')
  .map((s) => s.trim())
  .filter(Boolean);

/** One page through the stages before the write, each stage's output kept for the next. */
interface Page {
  name: EndpointName;
  body: Buffer;
  raw?: unknown[];
  extras?: Record<string, unknown>;
  items?: object[];
  rejects?: { raw: unknown; reason: string }[];
  mapped?: MappedPage;
}

const COMPANY = 'bench';

const stages = {
  parse: (p: Page, e: Endpoint) => {
    const c = readContainer(e, parseJson(p.name, httpResponse(200, {}, p.body)));
    p.raw = c.raw;
    p.extras = c.extras;
  },
  validate: (p: Page, e: Endpoint) => {
    const { items, rejects } = parseItems(e.item, p.raw!);
    p.items = items as object[];
    p.rejects = rejects;
  },
  map: (p: Page) => {
    p.mapped = mapPage(targetOfEndpoint(p.name), p.items!, { companyKey: COMPANY, extras: p.extras });
  },
  fingerprint: (p: Page) => fingerprintPage(p.mapped!),
  encode: (p: Page) => encodePage(p.mapped!),
} satisfies Record<string, (p: Page, e: Endpoint) => void>;

type Stage = keyof typeof stages;

const cpuUs = () => {
  const u = process.cpuUsage();
  return u.user + u.system;
};

setFlagsFromString('--expose-gc');
// A scavenge empties the young generation, where a page's garbage lives, without walking the whole heap.
const gc = runInNewContext('gc') as (o: { type: 'minor' }) => void;
let collections = 0;
new PerformanceObserver((list) => void (collections += list.getEntries().length)).observe({ entryTypes: ['gc'] });
// GC entries reach the observer on a later tick of the event loop.
const settle = () => new Promise((r) => setTimeout(r, 0));

interface StageFigures {
  usPerRecord: number;
  /** Heap growth per record over pages measured with no collection in between; null when every page had one. */
  bytesPerRecord: number | null;
}

const round = (x: number, digits = 2) => Math.round(x * 10 ** digits) / 10 ** digits;

/** CPU of each stage over all pages of a list, REPEAT times, then allocation page by page. */
async function runStages(rec: Recorded, pages: Page[], records: number): Promise<Record<Stage, StageFigures>> {
  const REPEAT = 3;
  const out = {} as Record<Stage, StageFigures>;
  for (const stage of Object.keys(stages) as Stage[]) {
    const fn = stages[stage];
    const t0 = cpuUs();
    for (let r = 0; r < REPEAT; r++) for (const p of pages) fn(p, rec.endpoint);
    const us = (cpuUs() - t0) / REPEAT;
    let bytes = 0;
    let counted = 0;
    for (const p of pages) {
      gc({ type: 'minor' });
      await settle();
      const before = collections;
      const heap0 = process.memoryUsage().heapUsed;
      fn(p, rec.endpoint);
      const grown = process.memoryUsage().heapUsed - heap0;
      await settle();
      if (collections !== before) continue;
      bytes += grown;
      counted += p.items?.length ?? 0;
    }
    out[stage] = { usPerRecord: round(us / records), bytesPerRecord: counted > 0 ? Math.round(bytes / counted) : null };
  }
  return out;
}

interface WriteFigures {
  pages: number;
  records: number;
  /** This process's CPU for the write (statements, protocol, what writePage does beyond the stages above). */
  syncMsPerPage: number;
  postgresMsPerPage: number;
  unchanged: { syncMsPerPage: number; postgresMsPerPage: number };
}

/** Every page written once into an empty schema, then again: Postgres's CPU and this process's, per page. */
async function writeAll(url: string, schema: string, pages: Page[]): Promise<WriteFigures> {
  // The server's data directory: its postmaster.pid names the process whose backends are counted.
  const dir = (await givenPostgres(url)).dataDir;
  const wh: Warehouse = await openWarehouse({ databaseUrl: url, schema });
  try {
    await dropWarehouse(url, schema);
    await wh.migrate();
    const syncedAt = new Date();
    const pass = async () => {
      const pg0 = postgresCpuSeconds(dir) ?? 0;
      const t0 = cpuUs();
      for (const [i, p] of pages.entries()) {
        await writePage(wh, {
          target: targetOfEndpoint(p.name),
          companyKey: COMPANY,
          stream: p.name,
          items: p.items!,
          rejects: p.rejects,
          extras: p.extras,
          syncedAt,
          checkpoint: { partition: '', cursor: { page: i } },
        });
      }
      const n = pages.length;
      return {
        syncMsPerPage: round((cpuUs() - t0) / 1000 / n),
        postgresMsPerPage: round((((postgresCpuSeconds(dir) ?? 0) - pg0) * 1000) / n),
      };
    };
    const first = await pass();
    const unchanged = await pass();
    return { pages: pages.length, records: pages.reduce((s, p) => s + p.items!.length, 0), ...first, unchanged };
  } finally {
    await wh.close();
  }
}

async function main(): Promise<void> {
  const load0 = loadavg().map((l) => round(l));
  const recorded = await recordPages({ size: SIZE, pages: PAGES, lists: LISTS });
  const byStream: Record<string, { pages: number; records: number } & Record<Stage, StageFigures>> = {};
  const all: Page[] = [];
  const totals = Object.fromEntries(Object.keys(stages).map((s) => [s, { us: 0, bytes: 0, counted: 0 }])) as Record<
    Stage,
    { us: number; bytes: number; counted: number }
  >;
  for (const rec of recorded) {
    const pages: Page[] = rec.bodies.map((body) => ({ name: rec.name, body }));
    stages.parse(pages[0]!, rec.endpoint);
    stages.validate(pages[0]!, rec.endpoint);
    for (const p of pages) {
      stages.parse(p, rec.endpoint);
      stages.validate(p, rec.endpoint);
    }
    const records = pages.reduce((s, p) => s + p.items!.length, 0);
    const figures = await runStages(rec, pages, records);
    byStream[rec.name] = { pages: pages.length, records, ...figures };
    for (const s of Object.keys(stages) as Stage[]) {
      totals[s].us += figures[s].usPerRecord * records;
      if (figures[s].bytesPerRecord !== null) {
        totals[s].bytes += figures[s].bytesPerRecord! * records;
        totals[s].counted += records;
      }
    }
    all.push(...pages);
  }
  const records = all.reduce((s, p) => s + p.items!.length, 0);
  const stagesAll = Object.fromEntries(
    (Object.keys(stages) as Stage[]).map((s) => [
      s,
      {
        usPerRecord: round(totals[s].us / records),
        bytesPerRecord: totals[s].counted ? Math.round(totals[s].bytes / totals[s].counted) : null,
      },
    ]),
  );
  const pg = await startPostgres({ durable: true });
  let embedded: WriteFigures;
  try {
    embedded = await writeAll(pg.url, 'rowpath_bench', all);
  } finally {
    await pg.stop();
  }
  const stock = process.env.DATABASE_URL ? await writeAll(process.env.DATABASE_URL, 'rowpath_bench', all) : undefined;
  const beforeWriteUs = Object.values(stagesAll).reduce((s, f) => s + f.usPerRecord, 0);
  process.stdout.write(
    `${JSON.stringify(
      {
        bench: 'rowpath',
        size: SIZE,
        pagesPerList: PAGES,
        pages: all.length,
        records,
        recordsPerPage: round(records / all.length, 1),
        loadAverage: { start: load0, end: loadavg().map((l) => round(l)) },
        stages: stagesAll,
        beforeWriteMsPerPage: round((beforeWriteUs * records) / all.length / 1000),
        write: { embedded, ...(stock ? { stock } : {}) },
        byStream,
      },
      null,
      2,
    )}\n`,
  );
}

await main();
