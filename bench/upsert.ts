import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import { openWarehouse, type Warehouse } from '../src/warehouse/connection.ts';
import { encode, mapItem, tableInfo } from '../src/warehouse/rows.ts';
import { targets } from '../src/warehouse/targets.ts';
import { writePage } from '../src/warehouse/upsert.ts';
import { startPostgres } from '../test/support/services.ts';

/**
 * Rows per second of writePage for shift assignments, in 200- and 1,000-row pages, against a raw COPY of the
 * same rows into the same table in the same run. Prints JSON. `ROWS=50000 npx tsx bench/upsert.ts` for less.
 */

const ROWS = Number(process.env.ROWS ?? 200_000);
const target = targets.shiftAssignments;
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
    Assignee: i % 7 === 0 ? null : { ServiceId: 1000 + (i % 900), EmployeeNumber: `E${1000 + (i % 900)}`, FirstName: 'Dana', LastName: 'Reyes' },
    VehicleName: i % 3 === 0 ? null : `Medic ${i % 20}`,
    ClockInDateTime: i % 2 === 0 ? start.toISOString() : null,
    ClockOutDateTime: null,
  };
}

/** COPY text format: tab-separated, \N for null, backslash escapes. */
function copyLine(row: Record<string, unknown>): string {
  return (
    table.columns
      .map((c) => {
        const v = encode(row[c.name], c.sqlType);
        return v === null ? '\\N' : v.replace(/\\/g, '\\\\').replace(/\t/g, '\\t').replace(/\n/g, '\\n').replace(/\r/g, '\\r');
      })
      .join('\t') + '\n'
  );
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
  const lines = items.map((it) => copyLine({ ...mapItem(target, 'bench', it).row, _synced_at: syncedAt, _deleted_at: null }));
  const chunks: string[] = [];
  for (let i = 0; i < lines.length; i += 1000) chunks.push(lines.slice(i, i + 1000).join(''));
  return timed(async () => {
    const writable = await wh.sql`copy ${wh.sql(wh.schema)}.shift_assignments (${wh.sql(cols)}) from stdin`.writable();
    await pipeline(Readable.from(chunks), writable);
  });
}

async function pages(wh: Warehouse, items: Record<string, unknown>[], size: number): Promise<number> {
  const syncedAt = new Date();
  return timed(async () => {
    for (let i = 0; i < items.length; i += size) {
      await writePage(wh, { target, companyKey: 'bench', items: items.slice(i, i + size), syncedAt, stream: 'bench' });
    }
  });
}

const pg = await startPostgres();
const wh = await openWarehouse({ databaseUrl: pg.url });
try {
  await wh.migrate();
  const items = Array.from({ length: ROWS }, (_, i) => item(i));
  const rate = (s: number) => Math.round(ROWS / s);
  await truncate(wh);
  const copySeconds = await copy(wh, items);
  await truncate(wh);
  const page200 = await pages(wh, items, 200);
  const page200Again = await pages(wh, items, 200);
  await truncate(wh);
  const page1000 = await pages(wh, items, 1000);
  const copyRate = rate(copySeconds);
  console.log(
    JSON.stringify(
      {
        bench: 'upsert',
        table: 'shift_assignments',
        rows: ROWS,
        copy: { seconds: +copySeconds.toFixed(2), rowsPerSecond: copyRate },
        writePage200: { seconds: +page200.toFixed(2), rowsPerSecond: rate(page200), ofCopy: +(rate(page200) / copyRate).toFixed(2) },
        writePage200Unchanged: { seconds: +page200Again.toFixed(2), rowsPerSecond: rate(page200Again), ofCopy: +(rate(page200Again) / copyRate).toFixed(2) },
        writePage1000: { seconds: +page1000.toFixed(2), rowsPerSecond: rate(page1000), ofCopy: +(rate(page1000) / copyRate).toFixed(2) },
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
