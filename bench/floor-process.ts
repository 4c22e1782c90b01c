import { Pool } from 'undici';
import type postgres from 'postgres';
import { postgresAt } from '../src/warehouse/socket.ts';
import { parseRateLimit } from '../src/config.ts';
import { createMemoryRateLimiter } from '../src/ratelimit/memory.ts';
import { endpoints, type EndpointName } from '../src/resources/index.ts';
import { SourceClient } from '../src/source/client.ts';
import { AUTH_HEADER, PAGE_LIMIT_MAX, type Endpoint } from '../src/source/endpoints.ts';
import { httpResponse } from '../src/source/http.ts';
import { parseJson } from '../src/source/json-body.ts';
import { jsonText } from '../src/source/json-text.ts';
import { parseItems, readContainer } from '../src/source/paging.ts';
import { openWarehouse, SESSION_SETTINGS, type Warehouse } from '../src/warehouse/connection.ts';
import { fenced, takeFence } from '../src/warehouse/fencing.ts';
import { arrayElement, arrayLiteral } from '../src/warehouse/encoding.ts';
import { snake } from '../src/warehouse/mapper.ts';
import { tableInfo, type Row, type TableInfo } from '../src/warehouse/catalog.ts';
import { encodePage } from '../src/warehouse/encoding.ts';
import { fingerprintPage } from '../src/warehouse/fingerprint.ts';
import { mapPage, type MappedPage } from '../src/warehouse/page-map.ts';
import { writePage } from '../src/warehouse/upsert.ts';
import { forEachLimited } from '../src/sync/windows.ts';
import { copyText, endCopy } from './copy-text.ts';
import { pagePath, reads, targetOfEndpoint as targetOf, type Query } from './sandbox-backfill.ts';

/**
 * A first sync's pages, read and written by one of bench/floor.ts's programs in a process of its own:
 *
 *   read       every page requested over HTTP and parsed (the cheapest parse we know)
 *   write      the same, then each page's top-level scalar fields into its table's columns, as text, one array
 *              literal per column, one INSERT … SELECT unnest per page in a transaction
 *   stages     the sync's parse, validation, mapping, fingerprint and encoding, then one INSERT … SELECT unnest
 *              per table of the page (its child tables too) in a transaction
 *   copy       the same stages, then one COPY per table of the page straight into it, in a transaction
 *   writePage  the sync's parse and validation, then its writePage (behind a run's fence, with a checkpoint)
 *   client     the sync's client (limiter, retries, read-ahead, page readers), then its writePage
 *
 * `read` and `write` are floors: they leave out validation, fingerprints, nested objects, child rows, history,
 * rejects, checkpoints and the fence, each of which the sync must do. A key column that no top-level field fills
 * (`_key`, an id the target renames) gets the record's position in the run instead.
 *
 * Environment: FLOOR_MODE, FLOOR_SANDBOX_URL, FLOOR_API_KEY; DATABASE_URL and FLOOR_SCHEMA for all but `read`.
 * Prints one JSON object: pages, records, and the CPU of the loop (start-up aside) and of the whole process.
 */

const MODES = ['read', 'write', 'stages', 'copy', 'writePage', 'client'] as const;
type Mode = (typeof MODES)[number];
const READS_AT_ONCE = 4;
const COMPANY = 'floor';

/** What a program made of one page: its records, and whether the list goes on. */
type Handled = { records: number; hasMore: boolean };
type PageHandler = (name: EndpointName, bytes: Buffer, n: number) => Promise<Handled>;

function insertInto(schema: string, table: TableInfo): string {
  const cols = table.columns.map((c) => `"${c.name}"`).join(', ');
  const select = table.columns.map((c, i) => `unnest($${i + 1}::${c.sqlType}[])`).join(', ');
  return `insert into "${schema}"."${table.name}" (${cols}) select ${select}`;
}

/** Statements with their parameters in one transaction; a key two pages hold (adjacent windows) is written once. */
async function insertAll(sql: postgres.Sql, statements: readonly string[], params: readonly string[][]): Promise<void> {
  const send = (suffix: string) =>
    sql.begin((tx) => Promise.all(statements.map((s, i) => tx.unsafe(`${s}${suffix}`, params[i]!, { prepare: true }))));
  try {
    await send('');
  } catch (e) {
    if ((e as { code?: string }).code !== '23505') throw e;
    await send(' on conflict do nothing');
  }
}

/** The company, the record's position in the run, the run's instant, and text as wide as a fingerprint. */
type Fixed = 'company' | 'position' | 'synced' | 'hash';

/** Where the floor's rows of one list come from: per column of its table, a field, a fixed value or NULL. */
interface FloorPlan {
  readonly insert: string;
  readonly sources: readonly ({ field: string } | Fixed | null)[];
}

function floorPlan(schema: string, name: EndpointName, first: Record<string, unknown>): FloorPlan {
  const table = tableInfo(targetOf(name).table);
  const fieldOf = new Map(Object.keys(first).map((f) => [snake(f), f]));
  const sources = table.columns.map((c): FloorPlan['sources'][number] => {
    if (c.name === 'company_key') return 'company';
    if (c.name === '_synced_at') return 'synced';
    if (c.name === '_hash') return 'hash';
    const field = c.sqlType === 'jsonb' ? undefined : fieldOf.get(c.name);
    if (field !== undefined) return { field };
    return table.primaryKey.includes(c.name) ? 'position' : null;
  });
  return { insert: insertInto(schema, table), sources };
}

/** The floor's parameters: one array literal per column. */
function floorArrays(plan: FloorPlan, items: readonly Record<string, unknown>[], firstPosition: number): string[] {
  const fixed: Record<Fixed, (i: number) => string> = {
    company: () => COMPANY,
    position: (i) => String(firstPosition + i),
    synced: () => SYNCED_AT,
    hash: () => HASH,
  };
  const parts = new Array<string>(items.length);
  return plan.sources.map((source) => {
    for (let i = 0; i < items.length; i++) {
      if (source === null) parts[i] = 'NULL';
      else if (typeof source === 'string') parts[i] = fixed[source](i);
      else {
        const v = items[i]![source.field];
        parts[i] =
          v === null || v === undefined || typeof v === 'object'
            ? 'NULL'
            : typeof v === 'string'
              ? arrayElement(v)
              : String(v);
      }
    }
    return arrayLiteral(parts);
  });
}
const SYNCED_AT = new Date().toISOString();
const HASH = '0'.repeat(32);

/** A page's records and whether its list goes on, from the cheapest parse we know. */
function pageBody(bytes: Buffer): { items: Record<string, unknown>[]; hasMore: boolean } {
  const body = JSON.parse(jsonText(bytes)) as
    | { Data?: Record<string, unknown>[]; HasMoreResults?: boolean }
    | Record<string, unknown>[];
  return Array.isArray(body)
    ? { items: body, hasMore: false }
    : { items: body.Data ?? [], hasMore: body.HasMoreResults === true };
}

/** Parsed as the sync parses a page: its container, and its records checked against their schema. */
function parsed(name: EndpointName, bytes: Buffer) {
  const e = endpoints[name] as Endpoint;
  const c = readContainer(e, parseJson(name, httpResponse(200, {}, bytes)));
  return { ...c, ...parseItems(e.item, c.raw) };
}

function readOnly(): PageHandler {
  return async (_name, bytes) => {
    const { items, hasMore } = pageBody(bytes);
    return { records: items.length, hasMore };
  };
}

function floorWrite(sql: postgres.Sql, schema: string): PageHandler {
  const plans = new Map<EndpointName, FloorPlan>();
  return async (name, bytes, n) => {
    const { items, hasMore } = pageBody(bytes);
    if (items.length > 0) {
      let plan = plans.get(name);
      if (!plan) plans.set(name, (plan = floorPlan(schema, name, items[0]!)));
      await insertAll(sql, [plan.insert], [floorArrays(plan, items, n * PAGE_LIMIT_MAX)]);
    }
    return { records: items.length, hasMore };
  };
}

/** A page as the sync makes it before the write: parsed, validated, mapped, fingerprinted, stamped. */
function stagedPage(
  name: EndpointName,
  bytes: Buffer,
): { page: MappedPage; tables: string[]; records: number; hasMore: boolean } {
  const target = targetOf(name);
  const c = parsed(name, bytes);
  const page = mapPage(target, c.items as object[], { companyKey: COMPANY, extras: c.extras });
  fingerprintPage(page);
  const syncedAt = new Date();
  for (const m of page.mapped) {
    m.row._synced_at = syncedAt;
    for (const rows of m.children) for (const r of rows) r._synced_at = syncedAt;
  }
  const tables = [target.table, ...(target.children ?? []).map((child) => child.table)];
  return { page, tables, records: c.raw.length, hasMore: c.hasMore };
}

function stagesWrite(sql: postgres.Sql, schema: string): PageHandler {
  return async (name, bytes) => {
    const { page, tables, records, hasMore } = stagedPage(name, bytes);
    if (page.mapped.length > 0)
      await insertAll(
        sql,
        tables.map((t) => insertInto(schema, tableInfo(t))),
        encodePage(page),
      );
    return { records, hasMore };
  };
}

/**
 * The stages, then each table's rows by COPY straight into it, in a transaction. COPY cannot skip a key it finds
 * stored (and postgres.js never settles a COPY the server rejects, porsager/postgres#1173), so a key that an
 * earlier page of the run wrote (adjacent windows share their boundary) is left out with its child rows.
 */
function copyWrite(sql: postgres.Sql, schema: string): PageHandler {
  const written = new Map<string, Set<string>>();
  return async (name, bytes) => {
    const { page, tables, records, hasMore } = stagedPage(name, bytes);
    let keys = written.get(tables[0]!);
    if (!keys) written.set(tables[0]!, (keys = new Set()));
    const fresh = page.mapped.filter((m) => !keys.has(m.keyText));
    for (const m of fresh) keys.add(m.keyText);
    const rows = [fresh.map((m) => m.row), ...tables.slice(1).map((_, i) => fresh.flatMap((m) => m.children[i]!))];
    await sql.begin(async (tx) => {
      for (const [i, t] of tables.entries())
        if (rows[i]!.length > 0) await copyInto(tx, schema, tableInfo(t), rows[i]!);
    });
    return { records, hasMore };
  };
}

async function copyInto(
  tx: postgres.TransactionSql,
  schema: string,
  table: TableInfo,
  rows: readonly Row[],
): Promise<void> {
  const text = copyText(table, rows);
  if (text === undefined) throw new Error(`${table.name}: a value COPY cannot carry`);
  const columns = table.columns.map((c) => `"${c.name}"`).join(', ');
  await endCopy(await tx.unsafe(`copy "${schema}"."${table.name}" (${columns}) from stdin`).writable(), text);
}

function pageOf(
  name: EndpointName,
  n: number,
  page: {
    items: readonly unknown[];
    rejects: readonly { raw: unknown; reason: string }[];
    extras: Record<string, unknown>;
  },
) {
  return {
    target: targetOf(name),
    companyKey: COMPANY,
    items: page.items as object[],
    rejects: page.rejects,
    extras: page.extras,
    syncedAt: new Date(),
    stream: name,
    checkpoint: { partition: name, cursor: { page: n } },
  };
}

function writePageWrite(wh: Warehouse): PageHandler {
  return async (name, bytes, n) => {
    const c = parsed(name, bytes);
    await writePage(wh, pageOf(name, n, c));
    return { records: c.raw.length, hasMore: c.hasMore };
  };
}

/** What one read came to. */
type ReadDone = { pages: number; records: number };

/** Walks one read page by page over plain HTTP, handing each page to `handle`. */
async function walkRead(
  pool: Pool,
  name: EndpointName,
  query: Query,
  handle: PageHandler,
  next: () => number,
): Promise<ReadDone> {
  let pages = 0;
  let records = 0;
  for (let offset = 0; ; offset += PAGE_LIMIT_MAX) {
    const res = await pool.request({
      method: 'GET',
      path: pagePath(name, query, offset),
      headers: { [AUTH_HEADER]: process.env.FLOOR_API_KEY! },
    });
    const bytes = Buffer.from(await res.body.arrayBuffer());
    if (res.statusCode !== 200) throw new Error(`${name}: HTTP ${res.statusCode}`);
    const handled = await handle(name, bytes, next());
    pages++;
    records += handled.records;
    if (!handled.hasMore) return { pages, records };
  }
}

/** Walks one read with the sync's client, each page written by writePage. */
async function clientRead(
  client: SourceClient,
  wh: Warehouse,
  name: EndpointName,
  query: Query,
  next: () => number,
): Promise<ReadDone> {
  let pages = 0;
  let records = 0;
  for await (const page of client.pages(endpoints[name] as Endpoint, query as never, { readAhead: READS_AT_ONCE })) {
    await writePage(wh, pageOf(name, next(), page));
    pages++;
    records += page.items.length + page.rejects.length;
  }
  return { pages, records };
}

/** What a program does with each page it reads over plain HTTP (`client` reads with the sync's client instead). */
function pageHandler(
  mode: Mode,
  schema: string,
  sql: postgres.Sql | undefined,
  wh: Warehouse | undefined,
): PageHandler {
  if (mode === 'write') return floorWrite(sql!, schema);
  if (mode === 'stages') return stagesWrite(sql!, schema);
  if (mode === 'copy') return copyWrite(sql!, schema);
  return wh ? writePageWrite(wh) : readOnly();
}

async function main(): Promise<void> {
  const mode: Mode = MODES.find((m) => m === process.env.FLOOR_MODE) ?? 'read';
  const baseUrl = process.env.FLOOR_SANDBOX_URL!;
  const schema = process.env.FLOOR_SCHEMA ?? 'workforce';
  const pool = new Pool(baseUrl, { connections: READS_AT_ONCE });
  const writes = mode === 'write' || mode === 'stages' || mode === 'copy';
  const sql = writes
    ? postgresAt(process.env.DATABASE_URL!, { max: READS_AT_ONCE, connection: SESSION_SETTINGS, onnotice: () => {} })
    : undefined;
  const opened =
    mode === 'writePage' || mode === 'client'
      ? await openWarehouse({ databaseUrl: process.env.DATABASE_URL!, schema })
      : undefined;
  const wh = opened && fenced(opened, await takeFence(opened, COMPANY, 'sync', COMPANY));
  const info = (await (await pool.request({ method: 'GET', path: '/_sandbox/info' })).body.json()) as Parameters<
    typeof reads
  >[0];
  const todo = await reads(info);
  const handle = pageHandler(mode, schema, sql, wh);
  const client =
    mode === 'client'
      ? new SourceClient({
          baseUrl,
          apiKey: process.env.FLOOR_API_KEY!,
          limiter: createMemoryRateLimiter(parseRateLimit('1000000/1s'), 0),
        })
      : undefined;
  let pageNumber = 0;
  const next = () => pageNumber++;
  let pages = 0;
  let records = 0;
  const loop0 = process.cpuUsage();
  await forEachLimited(todo, READS_AT_ONCE, async ([name, query]) => {
    const done = client
      ? await clientRead(client, wh!, name, query, next)
      : await walkRead(pool, name, query, handle, next);
    pages += done.pages;
    records += done.records;
  });
  const ms = (u: NodeJS.CpuUsage) => Math.round((u.user + u.system) / 1000);
  const loopCpuMs = ms(process.cpuUsage(loop0));
  await sql?.end();
  await opened?.close();
  await pool.close();
  process.stdout.write(
    `${JSON.stringify({ mode, pages, records, loopCpuMs, processCpuMs: ms(process.cpuUsage()) })}\n`,
  );
}

await main();
