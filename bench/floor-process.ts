import { Pool } from 'undici';
import postgres from 'postgres';
import { AUTH_HEADER, API_VERSION, PAGE_LIMIT_MAX } from '../src/source/endpoints.ts';
import { jsonText } from '../src/source/json-text.ts';
import { endpoints, streams, type EndpointName } from '../src/resources/index.ts';
import { arrayElement, arrayLiteral, snake, tableInfo, type TableInfo } from '../src/warehouse/rows.ts';
import { encodePage, fingerprintPage, mapPage } from '../src/warehouse/upsert.ts';
import { httpResponse } from '../src/source/http.ts';
import { parseJson } from '../src/source/json-body.ts';
import { parseItems, readContainer } from '../src/source/paging.ts';
import type { Endpoint } from '../src/source/endpoints.ts';
import { reads } from './sandbox-backfill.ts';

/**
 * The least a first sync can do with a page, run by bench/floor.ts in a process of its own:
 *
 *   read   every page of a first sync's reads, requested over HTTP and parsed (the cheapest parse we know)
 *   write  the same, then each page's records into their table: every top-level scalar field whose column
 *          exists, as text, one array literal per column, one INSERT … SELECT unnest per page in a transaction
 *
 *   stages the sync's own parse, validation, mapping, fingerprint and encoding (bench/rowpath.ts's stages), then
 *          one INSERT … SELECT unnest per table of the page (its children's too) in a transaction
 *
 * The floors do nothing else: no validation, fingerprint, nested object, child row, history, reject, checkpoint or fence. Each
 * is work the sync must do and the floor leaves out, so what it costs is a floor of a page on this machine.
 * A key column no top-level field fills (`_key`, a renamed id) gets the record's position in the run. Prints one JSON object: pages, records, CPU of the loop and
 * of the whole process.
 *
 * Environment: FLOOR_MODE (read | write | stages), FLOOR_SANDBOX_URL, FLOOR_API_KEY, DATABASE_URL and FLOOR_SCHEMA (write, stages).
 */

const MODES = ['read', 'write', 'stages'] as const;
const MODE = MODES.find((m) => m === process.env.FLOOR_MODE) ?? 'read';
const READS_AT_ONCE = 4;

type Query = Record<string, string | number | boolean>;

/** Where a list's records go: its table, and for each column the field it is read from (or a fixed source). */
interface Plan {
  readonly table: TableInfo;
  readonly insert: string;
  /** Per column: a field name, a fixed source (below) or null (left NULL). */
  readonly sources: readonly (string | Fixed | null)[];
}

/** The company, the record's position in the run (for a key column no field fills), the run's instant, and a fingerprint's width of text. */
type Fixed = 'company' | 'key' | 'synced' | 'hash';
const SYNCED_AT = new Date().toISOString();
const HASH = '0'.repeat(32);

const plans = new Map<EndpointName, Plan>();

function planFor(name: EndpointName, schema: string, first: Record<string, unknown>): Plan {
  let plan = plans.get(name);
  if (plan) return plan;
  const table = tableInfo(streams.find((s) => s.endpoint.name === name)!.target.table);
  const fieldOf = new Map(Object.keys(first).map((f) => [snake(f), f]));
  const sources = table.columns.map((c) => {
    if (c.name === 'company_key') return 'company';
    if (c.name === '_synced_at') return 'synced';
    if (c.name === '_hash') return 'hash';
    if (c.sqlType === 'jsonb') return null;
    // A key the list names otherwise (its target renames it) is numbered instead.
    return fieldOf.get(c.name) ?? (table.primaryKey.includes(c.name) ? 'key' : null);
  });
  plan = { table, sources, insert: insertInto(schema, table) };
  plans.set(name, plan);
  return plan;
}

function insertInto(schema: string, table: TableInfo): string {
  const cols = table.columns.map((c) => `"${c.name}"`).join(', ');
  const select = table.columns.map((c, i) => `unnest($${i + 1}::${c.sqlType}[])`).join(', ');
  return `insert into "${schema}"."${table.name}" (${cols}) select ${select}`;
}

/** A page through the sync's stages: its tables' inserts and their parameters (the target's table first). */
function staged(name: EndpointName, schema: string, bytes: Buffer): { statements: string[]; params: string[][]; records: number; hasMore: boolean } {
  const e = endpoints[name] as Endpoint;
  const target = streams.find((s) => s.endpoint.name === name)!.target;
  const c = readContainer(e, parseJson(name, httpResponse(200, {}, bytes)));
  const { items } = parseItems(e.item, c.raw);
  const page = mapPage(target, 'floor', items as object[], c.extras);
  fingerprintPage(page);
  const synced = new Date();
  for (const m of page.mapped) {
    m.row._synced_at = synced;
    for (const rows of m.children) for (const r of rows) r._synced_at = synced;
  }
  const tables = [target.table, ...(target.children ?? []).map((child) => child.table)];
  return { statements: tables.map((t) => insertInto(schema, tableInfo(t))), params: encodePage(page), records: c.raw.length, hasMore: c.hasMore };
}

/** One array literal per column of the page's records. */
function columnArrays(plan: Plan, items: readonly Record<string, unknown>[], page: number): string[] {
  const parts = new Array<string>(items.length);
  return plan.sources.map((source) => {
    for (let i = 0; i < items.length; i++) {
      if (source === 'company') parts[i] = 'floor';
      else if (source === 'key') parts[i] = String(page * PAGE_LIMIT_MAX + i);
      else if (source === 'synced') parts[i] = SYNCED_AT;
      else if (source === 'hash') parts[i] = HASH;
      else {
        const v = source === null ? null : items[i]![source];
        parts[i] = v === null || v === undefined || typeof v === 'object' ? 'NULL' : typeof v === 'string' ? arrayElement(v) : String(v);
      }
    }
    return arrayLiteral(parts);
  });
}

const hasMore = (body: unknown) => !Array.isArray(body) && (body as { HasMoreResults?: boolean }).HasMoreResults === true;

async function main(): Promise<void> {
  const pool = new Pool(process.env.FLOOR_SANDBOX_URL!, { connections: READS_AT_ONCE });
  const sql = MODE !== 'read' ? postgres(process.env.DATABASE_URL!, { max: READS_AT_ONCE, onnotice: () => {} }) : undefined;
  const schema = process.env.FLOOR_SCHEMA ?? 'warehouse';
  const headers = { [AUTH_HEADER]: process.env.FLOOR_API_KEY! };
  const info = (await (await pool.request({ method: 'GET', path: '/_sandbox/info' })).body.json()) as Parameters<typeof reads>[0];
  const todo = await reads(info);
  let pages = 0;
  let records = 0;
  const loop0 = process.cpuUsage();
  const write = async (statements: string[], params: string[][]) => {
    const send = (suffix: string) =>
      sql!.begin((tx) => Promise.all(statements.map((s, i) => tx.unsafe(`${s}${suffix}`, params[i]!, { prepare: true }))));
    try {
      await send('');
    } catch (e) {
      // Adjacent windows share their boundary: a key two pages hold is written once.
      if ((e as { code?: string }).code !== '23505') throw e;
      await send(' on conflict do nothing');
    }
  };
  const walk = async ([name, query]: [EndpointName, Query]) => {
    const e = endpoints[name];
    for (let offset = 0; ; offset += PAGE_LIMIT_MAX) {
      const q = new URLSearchParams({ 'api-version': API_VERSION });
      for (const [k, v] of Object.entries(query)) q.set(k, String(v));
      if (e.response.kind === 'envelope') {
        q.set('Offset', String(offset));
        q.set('Limit', String(PAGE_LIMIT_MAX));
      }
      const res = await pool.request({ method: 'GET', path: `${e.path}?${q}`, headers });
      const bytes = Buffer.from(await res.body.arrayBuffer());
      if (res.statusCode !== 200) throw new Error(`${name}: HTTP ${res.statusCode}`);
      pages++;
      if (MODE === 'stages') {
        const page = staged(name, schema, bytes);
        records += page.records;
        if (page.records > 0) await write(page.statements, page.params);
        if (!page.hasMore) return;
        continue;
      }
      const body = JSON.parse(jsonText(bytes)) as { Data?: Record<string, unknown>[] } | Record<string, unknown>[];
      const items = Array.isArray(body) ? body : (body.Data ?? []);
      records += items.length;
      if (MODE === 'write' && items.length > 0) {
        const plan = planFor(name, schema, items[0]!);
        await write([plan.insert], [columnArrays(plan, items, pages)]);
      }
      if (!hasMore(body)) return;
    }
  };
  let next = 0;
  await Promise.all(Array.from({ length: READS_AT_ONCE }, async () => {
    while (next < todo.length) await walk(todo[next++]!);
  }));
  const ms = (u: NodeJS.CpuUsage) => Math.round((u.user + u.system) / 1000);
  const loopCpuMs = ms(process.cpuUsage(loop0));
  await sql?.end();
  await pool.close();
  process.stdout.write(`${JSON.stringify({ mode: MODE, pages, records, loopCpuMs, processCpuMs: ms(process.cpuUsage()) })}\n`);
}

await main();
