import type { Warehouse } from './connection.ts';
import { exec, type Pipeline, transaction, type Tx } from './pipeline.ts';
import { retryThroughOutage } from './outage.ts';
import { sendFenceCheck } from './fencing.ts';
import { tableInfo, type Row, type TableInfo } from './catalog.ts';
import type { MappedItem } from './mapper.ts';
import { mapPage, type MappedPage, type Refusal } from './page-map.ts';
import { fingerprintPage } from './fingerprint.ts';
import { columnsAsArrays, textArray } from './encoding.ts';
import { sendRejects } from './rejects.ts';
import { sendCheckpoint, type CheckpointWrite } from './state.ts';
import { applyPersonalData, POLICY_CHANGED } from './personal-data/apply.ts';
import { forgetPolicy } from './personal-data/policy.ts';
import { claimStaging, stageRows, staging } from './staging.ts';
import { expectsFreshKeys, noteStoredKeys } from './fresh-keys.ts';
import { noteInserted } from './statistics.ts';
import type { Target } from './targets.ts';

/**
 * The page write: a mapped page's rows, child rows and history, its refusals and its checkpoint, in one
 * transaction. Every value travels as text, which Postgres reads as its column's type. Rows to insert or
 * rewrite travel inside one array parameter per column and are unnested: one prepared statement per table
 * whatever the page size, a handful of parameters, no limit on rows per statement but the memory of a chunk.
 * Many rows at once go by COPY into a session's staging table and one INSERT … SELECT from it instead
 * (staging.ts).
 */

/** A page to write: mapped already (page-map.ts mapPage, as the sync does), or its records, which are mapped first. */
export type WritePageOptions = PageWrite & (PageMapped | PageRecords);

interface PageMapped {
  page: MappedPage;
  /** The page mapped again from its records: a policy change between mapping and commit has it written anew. */
  remap: () => MappedPage;
}

interface PageWrite {
  target: Target;
  companyKey: string;
  syncedAt: Date;
  stream: string;
  runId?: number;
  checkpoint?: { partition: string } & CheckpointWrite;
}

interface PageRecords {
  items: readonly object[];
  rejects?: readonly Refusal[];
  /** Envelope fields of the page (FormId, FormTitle, RunLogTypeId, ...). */
  extras?: Record<string, unknown>;
}

export interface WriteResult {
  inserted: number;
  updated: number;
  unchanged: number;
  /** Rows this write marked deleted (the target's deletedFlag was true and they were not deleted yet). */
  deleted: number;
}

/** What writePage answers: the counts, and the key text of each record of the page in page order. */
export interface PageWritten extends WriteResult {
  keys: string[];
}

/** Rows per statement: bounds the size of one message, not a parameter count. */
export const CHUNK_ROWS = 5000;

/**
 * From this many rows on, rows go by COPY into staging. Measured end to end on shift assignments (writePage,
 * TCP_NODELAY): COPY lost to unnest at 50 to 200 rows (the service's pages: its two extra round trips, CopyIn
 * and CopyDone, and the staging table's truncation at commit cost more than it saves) and drew level at 1,000.
 */
export const COPY_MIN_ROWS = 1000;

const q = (name: string) => `"${name}"`;
const qt = (schema: string, table: string) => `${q(schema)}.${q(table)}`;

const statements = new Map<string, string>();
function cached(key: string, build: () => string): string {
  let s = statements.get(key);
  if (!s) statements.set(key, (s = build()));
  return s;
}

/**
 * One row per element of the column arrays, unnested in the select list: Postgres streams those rows, where
 * `from unnest(a, b, …)` first copies every row into a tuplestore (a fifth of an INSERT's server time). Each
 * array is a parameter of its column's type, so each value is parsed once, as what it is, rather than first as
 * text and then cast.
 */
function unnestInput(table: TableInfo): string {
  return `select ${table.columns.map((c, i) => `unnest($${i + 1}::${c.sqlType}[]) as ${q(c.name)}`).join(', ')}`;
}

const cast = (alias: string, c: { name: string; sqlType: string }) => `${alias}.${q(c.name)}::${c.sqlType}`;

/**
 * `alias`'s key is one of the keys given as arrays of the key columns' types from parameter `$first` on: one
 * index probe each, never a join the planner could turn into a scan of the company's rows while the statistics
 * of a filling table lag behind. The arrays are typed parameters, not text arrays cast in the statement: a cast
 * array is an expression, which a plan that filters rows (a generic plan made while the table was nearly empty)
 * evaluates again for every row it looks at, parsing the whole page's keys each time.
 */
function keyProbe(table: TableInfo, alias: string, first: number): string {
  const key = table.primaryKey.slice(1).map((k) => table.byName.get(k)!);
  return key.length === 1
    ? `${alias}.${q(key[0]!.name)} = any($${first}::${key[0]!.sqlType}[])`
    : `(${key.map((c) => `${alias}.${q(c.name)}`).join(', ')}) in (select * from unnest(${key
        .map((c, i) => `$${i + first}::${c.sqlType}[]`)
        .join(', ')}))`;
}

/**
 * Locks the page's existing rows in key order and reads their stored hash and deletion state, in one statement.
 * With every writer taking row locks in one order, pages that share keys (adjacent windows share their boundary)
 * wait for each other instead of deadlocking; and what was read cannot change before the page commits.
 */
export function lockAndReadStatement(schema: string, table: TableInfo): string {
  return cached(`lock-read:${schema}.${table.name}`, () => {
    const key = table.primaryKey.slice(1);
    return `select ${key.map((k) => `t.${q(k)}::text as ${q(k)}`).join(', ')}, t."_hash", t."_deleted_at" is not null as was_deleted
from ${qt(schema, table.name)} t where t.company_key = $1 and ${keyProbe(table, 't', 2)}
order by ${key.map((k) => `t.${q(k)}`).join(', ')} for update`;
  });
}

/** Where an INSERT … SELECT reads its rows: text columns aliased `i`, unnested parameters or staged rows. */
interface Source {
  readonly id: string;
  readonly from: string;
}

const unnested = (table: TableInfo): Source => ({ id: 'unnest', from: `(${unnestInput(table)}) i` });

/** One multi-row upsert of text rows; a row deleted before keeps its first deletion time. */
function upsertStatement(schema: string, table: TableInfo, source: Source): string {
  return cached(`upsert:${source.id}:${schema}.${table.name}`, () => {
    const key = table.primaryKey;
    const update = table.columns
      .filter((c) => !key.includes(c.name))
      .map((c) =>
        c.name === '_deleted_at'
          ? `"_deleted_at" = case when excluded."_deleted_at" is null then null else coalesce(t."_deleted_at", excluded."_deleted_at") end`
          : `${q(c.name)} = excluded.${q(c.name)}`,
      );
    return `insert into ${qt(schema, table.name)} as t (${table.columns.map((c) => q(c.name)).join(', ')})
select ${table.columns.map((c) => cast('i', c)).join(', ')} from ${source.from}
on conflict (${key.map(q).join(', ')}) do update set ${update.join(', ')}`;
  });
}

/** A join condition matching a table's key columns against unnested arrays of their types starting at `$first`. */
function keyJoin(
  _schema: string,
  table: TableInfo,
  key: readonly string[],
  first: number,
): { from: string; on: string } {
  const cols = key.map((k) => table.byName.get(k)!);
  const arrays = cols.map((c, i) => `$${first + i}::${c.sqlType}[]`).join(', ');
  return {
    from: `unnest(${arrays}) as k(${cols.map((c) => q(c.name)).join(', ')})`,
    on: cols.map((c) => `x.${q(c.name)} = k.${q(c.name)}`).join(' and '),
  };
}

function chunks<T>(items: readonly T[], size = CHUNK_ROWS): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

interface Previous {
  hash: string;
  wasDeleted: boolean;
}

/** The stored state of the page's keys that exist, by key text; those rows stay locked until the page commits. */
async function lockAndRead(
  tx: Tx,
  schema: string,
  table: TableInfo,
  mapped: readonly MappedItem[],
): Promise<Map<string, Previous>> {
  const previous = new Map<string, Previous>();
  const key = table.primaryKey.slice(1);
  for (const chunk of chunks(mapped)) {
    const rows = chunk.map((m) => m.row);
    for (const o of await exec(tx, lockAndReadStatement(schema, table), [
      rows[0]!.company_key,
      ...keyArrays(rows, key),
    ])) {
      const keyText = JSON.stringify(key.map((k) => o[k] as string | null));
      previous.set(keyText, { hash: o._hash as string, wasDeleted: o.was_deleted as boolean });
    }
  }
  return previous;
}

function insertStatement(schema: string, table: TableInfo, source: Source): string {
  return cached(
    `insert:${source.id}:${schema}.${table.name}`,
    () =>
      `insert into ${qt(schema, table.name)} (${table.columns.map((c) => q(c.name)).join(', ')})
select ${table.columns.map((c) => cast('i', c)).join(', ')} from ${source.from}`,
  );
}

type Statement = (schema: string, table: TableInfo, source: Source) => string;

/** Where the rows written open their new history version: the history table and the time it is valid from. */
interface Opens {
  readonly history: TableInfo;
  readonly at: Date;
}

/**
 * `write` (an INSERT … SELECT) with its rows that are not deleted opening their history version in the same
 * statement: RETURNING hands the rows as written to the history insert, so the page's rows are neither sent nor
 * looked up a second time. `at` is the parameter holding the version's start.
 */
function openingHistory(schema: string, history: TableInfo, write: string, at: string): string {
  return cached(`opening:${history.name}:${write}`, () => {
    const content = history.columns
      .filter((c) => c.name !== 'valid_from' && c.name !== 'valid_to')
      .map((c) => q(c.name));
    return `with w as (${write}
returning ${content.join(', ')}, "_deleted_at" is null as wfsync_opens)
insert into ${qt(schema, history.name)} (${content.join(', ')}, valid_from, valid_to)
select ${content.join(', ')}, ${at}::timestamptz, null from w where wfsync_opens
on conflict (${history.primaryKey.map(q).join(', ')}) do update set ${content.map((c) => `${c} = excluded.${c}`).join(', ')}, valid_to = null`;
  });
}

/** A table written in a page's transaction: the pipeline it is sent on and the warehouse's schema. */
interface TableWrite {
  readonly pipe: Pipeline;
  readonly schema: string;
  readonly table: TableInfo;
}

/**
 * Runs an INSERT … SELECT over rows: staged by COPY when there are enough of them (and every value can travel
 * by COPY), else unnested from array parameters, a chunk at a time. With `opens`, the rows open their history.
 */
async function insertFrom(
  { pipe, schema, table }: TableWrite,
  rows: readonly Row[],
  statement: Statement,
  opens?: Opens,
): Promise<void> {
  if (rows.length === 0) return;
  const send = (source: Source, params: string[]) => {
    const write = statement(schema, table, source);
    if (!opens) return pipe.send(write, params);
    const at = `$${params.length + 1}`;
    pipe.send(openingHistory(schema, opens.history, write, at), [...params, opens.at.toISOString()]);
  };
  const s = staging(schema, table);
  if (
    rows.length >= COPY_MIN_ROWS &&
    claimStaging(pipe.tx, s) &&
    (await pipe.alone(() => stageRows(pipe.tx, s, rows)))
  ) {
    send({ id: 'staged', from: `${q(s.name)} i` }, []);
    return;
  }
  for (const chunk of chunks(rows)) send(unnested(table), columnsAsArrays(chunk, table.columns));
}

const upsertRows = (into: TableWrite, rows: readonly Row[], opens?: Opens) =>
  insertFrom(into, rows, upsertStatement, opens);
const insertRows = (into: TableWrite, rows: readonly Row[], opens?: Opens) =>
  insertFrom(into, rows, insertStatement, opens);

/** Key values (after company_key) of mapped parents, one text array per key column. */
function keyArrays(rows: readonly Row[], key: readonly string[]): string[] {
  return key.map((k) => textArray(rows.map((r) => (r[k] == null ? null : String(r[k])))));
}

/**
 * Child rows of the given parents are replaced by the ones in this page. Only parents in `stored` can have child
 * rows to delete: a parent the page inserts has none (had another writer inserted it meanwhile, the parent's
 * INSERT fails and the page is written again as an upsert, which passes every parent as stored).
 */
async function replaceChildren(
  { pipe, schema, target }: TargetWrite,
  parents: readonly MappedItem[],
  stored: readonly MappedItem[],
): Promise<void> {
  for (const [i, child] of (target.children ?? []).entries()) {
    const table = tableInfo(child.table);
    const parentColumns = child.parentColumns ?? target.key;
    for (const chunk of chunks(stored)) {
      const { from, on } = keyJoin(schema, table, parentColumns, 2);
      const del = cached(
        `children:${schema}.${table.name}`,
        () => `delete from ${qt(schema, table.name)} x using ${from} where x.company_key = $1 and ${on}`,
      );
      pipe.send(del, [
        chunk[0]!.row.company_key,
        ...keyArrays(
          chunk.map((p) => renameKey(p.row, target.key, parentColumns)),
          parentColumns,
        ),
      ]);
    }
    await insertRows(
      { pipe, schema, table },
      parents.flatMap((p) => p.children[i]!),
    );
  }
}

function renameKey(row: Row, from: readonly string[], to: readonly string[]): Row {
  return Object.fromEntries(to.map((c, i) => [c, row[from[i]!]]));
}

/** Closes the open history version of each key (the rows written then open their next one: openingHistory). */
function closeHistory({ pipe, schema, target, companyKey, syncedAt: at }: TargetWrite, close: readonly Row[]): void {
  if (!target.history || close.length === 0) return;
  const history = tableInfo(target.history);
  const { from, on } = keyJoin(schema, history, target.key, 3);
  const sql = cached(
    `history-close:${schema}.${history.name}`,
    () =>
      `update ${qt(schema, history.name)} x set valid_to = $2 from ${from} where x.company_key = $1 and x.valid_to is null and ${on}`,
  );
  pipe.send(sql, [companyKey, at, ...keyArrays(close, target.key)]);
}

/**
 * How new rows (keys the page's lock-and-read did not find) are written. A plain INSERT costs Postgres a third
 * less than INSERT … ON CONFLICT; it fails only when another writer inserted one of those keys since the read,
 * and then the page is written again with `upsert`. `fresh` skips the read and inserts every row: for a page
 * expected to hold only new keys (fresh-keys.ts), which fails the same way when one of them is stored.
 */
type NewRows = 'fresh' | 'insert' | 'upsert';

/** One target's rows written in a page's transaction: where, for which company, and the sync's time. */
interface TargetWrite {
  readonly pipe: Pipeline;
  readonly schema: string;
  readonly target: Target;
  readonly companyKey: string;
  readonly syncedAt: Date;
}

/**
 * Writes mapped items of one target with children and history; counts what changed. `prepare` is handed the
 * items about to be written (not those found unchanged) before any is sent.
 */
async function writeMapped(
  into: TargetWrite,
  mapped: readonly MappedItem[],
  newRows: NewRows,
  prepare?: (items: readonly MappedItem[]) => void,
): Promise<WriteResult> {
  const { pipe, schema, target, syncedAt } = into;
  const result: WriteResult = { inserted: 0, updated: 0, unchanged: 0, deleted: 0 };
  if (mapped.length === 0) return result;
  for (const m of mapped) {
    m.row._synced_at = syncedAt;
    m.row._deleted_at = m.deleted ? syncedAt : null;
    for (const rows of m.children)
      for (const r of rows) Object.assign(r, { _synced_at: syncedAt, _deleted_at: m.row._deleted_at });
  }
  const table = tableInfo(target.table);
  const previous =
    newRows === 'fresh'
      ? new Map<string, Previous>()
      : await pipe.alone(() => lockAndRead(pipe.tx, schema, table, mapped));
  const changed: MappedItem[] = [];
  const stored: MappedItem[] = [];
  const fresh: Row[] = [];
  const rewrite: Row[] = [];
  const close: Row[] = [];
  for (const m of mapped) {
    const before = previous.get(m.keyText);
    const differs = !before || before.hash !== m.row._hash || before.wasDeleted !== m.deleted;
    if (!before) result.inserted++;
    else if (differs) result.updated++;
    else result.unchanged++;
    if (m.deleted && !before?.wasDeleted) result.deleted++;
    // A row read again as stored writes nothing: deletion inference keeps its own set of keys seen.
    if (!differs) continue;
    (before || newRows === 'upsert' ? rewrite : fresh).push(m.row);
    changed.push(m);
    if (before || newRows === 'upsert') stored.push(m);
    if (before && !before.wasDeleted) close.push(m.row);
  }
  prepare?.(changed);
  closeHistory(into, close);
  const opens = target.history ? { history: tableInfo(target.history), at: syncedAt } : undefined;
  await insertRows({ pipe, schema, table }, fresh, opens);
  // Rows read before are locked until commit, so their upsert always finds them.
  await upsertRows({ pipe, schema, table }, rewrite, opens);
  // Children of an unchanged parent are unchanged too (the parent's hash covers them).
  if (changed.length > 0) await replaceChildren(into, changed, stored);
  return result;
}

/** Postgres's unique_violation. */
const UNIQUE_VIOLATION = '23505';

/**
 * A key stored already. On Citus, an INSERT … SELECT of parameters reaches the workers by COPY, and Citus reports
 * a refusal there without its SQLSTATE (XX000 from its ReportCopyError), the worker's message and detail kept.
 */
function isUniqueViolation(e: unknown): boolean {
  const err = e as { code?: string; routine?: string; detail?: string };
  if (err.code === UNIQUE_VIOLATION) return true;
  return (
    err.code === 'XX000' && err.routine === 'ReportCopyError' && /^Key \(.*\) already exists\.$/s.test(err.detail ?? '')
  );
}

/**
 * Writes one page in one transaction: its rows (deduplicated by key, last wins), their child rows and history,
 * the records that failed their schema, and the checkpoint the page completes. Either all of it or none.
 */
export async function writePage(wh: Warehouse, o: WritePageOptions): Promise<PageWritten> {
  try {
    return await writePageOnce(wh, o, 'page' in o ? o.page : mapRecords(o));
  } catch (e) {
    // The personal-data policy changed between mapping and writing: map again under the new one.
    if ((e as { code?: string }).code !== POLICY_CHANGED) throw e;
    forgetPolicy(wh, o.companyKey);
    return writePageOnce(wh, o, 'page' in o ? o.remap() : mapRecords(o));
  }
}

const mapRecords = (o: PageWrite & PageRecords) =>
  mapPage(o.target, o.items, { companyKey: o.companyKey, extras: o.extras }, o.rejects);

async function writePageOnce(wh: Warehouse, o: WritePageOptions, page: MappedPage): Promise<PageWritten> {
  fingerprintPage(page);
  const mapped = page.mapped;
  // Child elements that could not be rows are rejects of the page like records that failed their schema.
  const freshKeys = expectsFreshKeys(wh, o.companyKey, o.target);
  const personal = await retryThroughOutage(
    () => applyPersonalData(wh, page, [...page.refused, ...page.childRejects]),
    wh.outage,
  );
  const rejects = personal.rejects;
  let envelopeInserted = 0;
  const write = async (newRows: NewRows) =>
    transaction(wh.sessions, async (pipe) => {
      sendFenceCheck(pipe, wh);
      personal.check(pipe);
      if (page.envelope) {
        // The guess of fresh keys is the page's target's; the envelope's keys are always read.
        const e = await writeMapped(
          { pipe, schema: wh.schema, target: page.envelope.target, companyKey: o.companyKey, syncedAt: o.syncedAt },
          page.envelope.mapped,
          newRows === 'fresh' ? 'insert' : newRows,
        );
        envelopeInserted = e.inserted;
      }
      const into = { pipe, schema: wh.schema, target: o.target, companyKey: o.companyKey, syncedAt: o.syncedAt };
      const result = await writeMapped(into, mapped, newRows, personal.prepare);
      sendRejects(pipe, wh.schema, {
        companyKey: o.companyKey,
        stream: o.stream,
        runId: o.runId,
        rejects,
        written: mapped.map((m) => m.keyText),
      });
      if (o.checkpoint)
        await sendCheckpoint(
          pipe,
          wh.schema,
          { companyKey: o.companyKey, stream: o.stream, partition: o.checkpoint.partition },
          o.checkpoint,
        );
      return result;
    });
  const attempt = async () => {
    try {
      return await write(freshKeys ? 'fresh' : 'insert');
    } catch (e) {
      if (!isUniqueViolation(e)) throw e;
      return write('upsert');
    }
  };
  // A page whose connection was lost rolled back: it is written again once the warehouse is back.
  const result = await retryThroughOutage(attempt, wh.outage);
  noteStoredKeys(wh, o.companyKey, o.target, result.inserted < mapped.length);
  if (page.envelope) await noteInserted(wh, page.envelope.target, envelopeInserted);
  await noteInserted(wh, o.target, result.inserted);
  return { ...result, keys: page.keys };
}
