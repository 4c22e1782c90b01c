import { loadavg } from 'node:os';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import { openWarehouse, type Warehouse } from '../src/warehouse/connection.ts';
import { encode } from '../src/warehouse/encoding.ts';
import { mapItem } from '../src/warehouse/fingerprint.ts';
import { tableInfo } from '../src/warehouse/catalog.ts';
import { targets } from '../src/resources/index.ts';
import { writePage } from '../src/warehouse/upsert.ts';
import { startPostgres } from '../test/support/services.ts';

/**
 * Rows per second of writePage for shift assignments against a raw COPY of the same rows into the same table in
 * the same run: one writer in 200- and 1,000-row pages, the same 200-row pages again (unchanged), and 2 and 4
 * writers at once over disjoint key ranges in 200-row pages, as the sync engine writes its windows
 * (windowConcurrency 4, the service's pages of 200). writePage's time includes mapping; COPY's rows are
 * mapped and encoded before its clock starts. `copyPerPage200` is that raw COPY again in 200-row pages of one
 * transaction each: the cost of a transaction per page alone. Prints JSON with the load average at start and
 * end (the bench shares the machine's cores with Postgres and anything else running).
 * `ROWS=50000 node --import tsx bench/upsert.ts` for less.
 */

const ROWS = Number(process.env.ROWS ?? 200_000);
const target = targets['shift-assignments'];
const table = tableInfo(target.table);

function item(i: number): Record<string, unknown> {
  const start = new Date(Date.UTC(2024, 0, 1) + (i % 5000) * 3_600_000);
  return {
    ShiftAssignmentId: i + 1,
    ScheduleId: 1 + (i % 40),
    ScheduleName: `Schedule ${1 + (i % 40)}`,
    ShiftId: 1 + (i % 300),
    ShiftName: `Shift ${1 + (i % 300)}`,
    JobTitleId: 1 + (i % 12),
    JobTitleName: `Job ${1 + (i % 12)}`,
    StartDateTime: start.toISOString().replace('Z', '+00:00'),
    EndDateTime: new Date(start.getTime() + 12 * 3_600_000).toISOString().replace('Z', '+00:00'),
    Type: i % 10 === 0 ? 'Ride Along' : 'Shift Assignment',
    Assignee:
      i % 7 === 0
        ? null
        : { ServiceId: 1000 + (i % 900), EmployeeNumber: `E${1000 + (i % 900)}`, FirstName: 'Dana', LastName: 'Reyes' },
    VehicleName: i % 3 === 0 ? null : `Medic ${i % 20}`,
    ClockInDateTime: i % 2 === 0 ? start.toISOString() : null,
    ClockOutDateTime: null,
  };
}

/** COPY text format: tab-separated, \N for null, backslash escapes. */
function copyLine(row: Record<string, unknown>): string {
  return `${table.columns
    .map((c) => {
      const v = encode(row[c.name], c.sqlType);
      return v === null
        ? '\\N'
        : v.replace(/\\/g, '\\\\').replace(/\t/g, '\\t').replace(/\n/g, '\\n').replace(/\r/g, '\\r');
    })
    .join('\t')}\n`;
}

/**
 * The same raw COPY, but of 200-row pages, each in a transaction of its own, one page at a time: what one
 * transaction per service page costs before any mapping, reading of stored rows or upsert.
 */
async function copyPages(wh: Warehouse, items: Record<string, unknown>[], size: number): Promise<number> {
  const syncedAt = new Date();
  const cols = table.columns.map((c) => c.name);
  const pages: string[] = [];
  for (let i = 0; i < items.length; i += size) {
    pages.push(
      items
        .slice(i, i + size)
        .map((it) => copyLine({ ...mapItem(target, 'bench', it).row, _synced_at: syncedAt, _deleted_at: null }))
        .join(''),
    );
  }
  return timed(async () => {
    for (const page of pages) {
      await wh.sql.begin(async (tx) => {
        const writable = await tx`copy ${tx(wh.schema)}.shift_assignments (${tx(cols)}) from stdin`.writable();
        await pipeline(Readable.from([page]), writable);
      });
    }
  });
}

async function truncate(wh: Warehouse): Promise<void> {
  await wh.sql`truncate ${wh.sql(wh.schema)}.shift_assignments`;
}

async function timed(fn: () => Promise<void>): Promise<number> {
  const started = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - started) / 1e9;
}

/** Raw COPY of the very rows writePage writes, prepared before the clock starts. */
async function copy(wh: Warehouse, items: Record<string, unknown>[]): Promise<number> {
  const syncedAt = new Date();
  const cols = table.columns.map((c) => c.name);
  const lines = items.map((it) =>
    copyLine({ ...mapItem(target, 'bench', it).row, _synced_at: syncedAt, _deleted_at: null }),
  );
  const chunks: string[] = [];
  for (let i = 0; i < lines.length; i += 1000) chunks.push(lines.slice(i, i + 1000).join(''));
  return timed(async () => {
    const writable = await wh.sql`copy ${wh.sql(wh.schema)}.shift_assignments (${wh.sql(cols)}) from stdin`.writable();
    await pipeline(Readable.from(chunks), writable);
  });
}

async function writeAll(wh: Warehouse, items: Record<string, unknown>[], size: number, syncedAt: Date): Promise<void> {
  for (let i = 0; i < items.length; i += size) {
    await writePage(wh, { target, companyKey: 'bench', items: items.slice(i, i + size), syncedAt, stream: 'bench' });
  }
}

/** `writers` writers at once, each over its own contiguous key range, each a page at a time. */
async function pages(wh: Warehouse, items: Record<string, unknown>[], size: number, writers = 1): Promise<number> {
  const syncedAt = new Date();
  const share = Math.ceil(items.length / writers);
  const ranges = Array.from({ length: writers }, (_, w) => items.slice(w * share, (w + 1) * share));
  return timed(async () => {
    await Promise.all(ranges.map((range) => writeAll(wh, range, size, syncedAt)));
  });
}

const load = () => loadavg().map((l) => +l.toFixed(2));

const loadAtStart = load();
const pg = await startPostgres();
const wh = await openWarehouse({ databaseUrl: pg.url });
try {
  await wh.migrate();
  const items = Array.from({ length: ROWS }, (_, i) => item(i));
  const rate = (s: number) => Math.round(ROWS / s);
  await truncate(wh);
  const copySeconds = await copy(wh, items);
  const copyRate = rate(copySeconds);
  const ofCopy = (seconds: number) => +(rate(seconds) / copyRate).toFixed(2);
  await truncate(wh);
  const copyPerPageSeconds = await copyPages(wh, items, 200);
  const copyPerPage200 = {
    seconds: +copyPerPageSeconds.toFixed(2),
    rowsPerSecond: rate(copyPerPageSeconds),
    ofCopy: ofCopy(copyPerPageSeconds),
  };
  const result = (seconds: number) => ({
    seconds: +seconds.toFixed(2),
    rowsPerSecond: rate(seconds),
    ofCopy: ofCopy(seconds),
    meetsGoal: ofCopy(seconds) >= 0.5,
    ofCopyPerPage200: +(rate(seconds) / copyPerPage200.rowsPerSecond).toFixed(2),
  });
  await truncate(wh);
  const page200 = result(await pages(wh, items, 200));
  const page200Unchanged = result(await pages(wh, items, 200));
  await truncate(wh);
  const page1000 = result(await pages(wh, items, 1000));
  await truncate(wh);
  const page200Writers2 = result(await pages(wh, items, 200, 2));
  await truncate(wh);
  const page200Writers4 = result(await pages(wh, items, 200, 4));
  console.log(
    JSON.stringify(
      {
        bench: 'upsert',
        table: 'shift_assignments',
        rows: ROWS,
        loadAverage: { start: loadAtStart, end: load() },
        copy: { seconds: +copySeconds.toFixed(2), rowsPerSecond: copyRate },
        copyPerPage200,
        writePage200: page200,
        writePage200Unchanged: page200Unchanged,
        writePage1000: page1000,
        writePage200Writers2: page200Writers2,
        writePage200Writers4: page200Writers4,
        goal: 'writePage at least half of COPY',
      },
      null,
      2,
    ),
  );
} finally {
  await wh.close();
  await pg.stop();
}
