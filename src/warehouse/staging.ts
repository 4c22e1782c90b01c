import { createHash } from 'node:crypto';
import type { Writable } from 'node:stream';
import type { Sql, TransactionSql } from 'postgres';
import { encode } from './encoding.ts';
import type { Row, TableInfo } from './catalog.ts';

/**
 * Rows of a page on their way into a warehouse table through COPY: COPY into a temporary staging table of the
 * session, then one INSERT … SELECT reads it. COPY costs the server less per row than unnesting
 * parameter arrays, and the client less than encoding them.
 *
 * Every staging column is text and the INSERT casts, as the unnest path does: COPY itself then cannot fail on
 * a value, and a bad value fails the INSERT with Postgres's own message. That matters beyond the message:
 * postgres.js never settles a COPY writable the server rejects after its end (porsager/postgres#1173), so a
 * failing COPY would hang the page's transaction.
 */

type Tx = Sql | TransactionSql;

const q = (name: string) => `"${name}"`;

export interface Staging {
  /** The temporary table, unqualified (it lives in the session's pg_temp). */
  readonly name: string;
  readonly create: string;
  readonly copy: string;
  /** COPY text of rows, or undefined when a value cannot travel by COPY. */
  lines(rows: readonly Row[]): string | undefined;
}

const stagings = new Map<string, Staging>();

/** The staging table of one warehouse table; one per session, emptied at each commit (ON COMMIT DELETE ROWS). */
export function staging(schema: string, table: TableInfo): Staging {
  const id = `${schema}.${table.name}`;
  let s = stagings.get(id);
  if (s) return s;
  // Schema and table names together can pass Postgres's 63 characters: a short hash tells them apart.
  const name = `wfsync_stage_${table.name.slice(0, 30)}_${createHash('sha256').update(id).digest('hex').slice(0, 8)}`;
  const columns = table.columns.map((c) => q(c.name)).join(', ');
  s = {
    name,
    create: `create temp table if not exists ${q(name)} (${table.columns.map((c) => `${q(c.name)} text`).join(', ')}) on commit delete rows`,
    copy: `copy ${q(name)} (${columns}) from stdin`,
    lines: (rows) => copyText(table, rows),
  };
  stagings.set(id, s);
  return s;
}

/** Characters COPY's text format escapes, and NUL, which no Postgres text holds (the unnest path reports it). */
const SPECIAL = /[\\\t\n\r\0]/;

/** Rows in COPY text format: tab-separated, `\N` for null, backslash escapes; undefined when a value holds NUL. */
export function copyText(table: TableInfo, rows: readonly Row[]): string | undefined {
  const cols = table.columns;
  let out = '';
  for (const r of rows) {
    for (let i = 0; i < cols.length; i++) {
      const c = cols[i]!;
      const v = encode(r[c.name], c.sqlType);
      if (i > 0) out += '\t';
      if (v === null) out += '\\N';
      else if (!SPECIAL.test(v)) out += v;
      else if (v.includes('\0')) return undefined;
      else out += v.replace(/\\/g, '\\\\').replace(/\t/g, '\\t').replace(/\n/g, '\\n').replace(/\r/g, '\\r');
    }
    out += '\n';
  }
  return out;
}

/**
 * COPYs rows into the staging table (created if this session has none yet, in the same round trip).
 * False when a value cannot travel by COPY; nothing was sent then.
 */
export async function stageRows(tx: Tx, s: Staging, rows: readonly Row[]): Promise<boolean> {
  const text = s.lines(rows);
  if (text === undefined) return false;
  // Both go out in this order without waiting for the first: execute() hands each to the connection now.
  const created = tx.unsafe(s.create).execute();
  const copy = tx.unsafe(s.copy);
  const opened = copy.writable();
  copy.execute();
  const [, writable] = await Promise.all([created, opened]);
  await endCopy(writable, text);
  return true;
}

/** Writes a COPY's whole text and ends it; settles with the server's CommandComplete for the COPY ('finish'). */
export function endCopy(writable: Writable, text: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    writable.once('error', reject);
    writable.end(text, () => resolve());
  });
}

/** The staging tables each open transaction has filled, by its transaction object. */
const filled = new WeakMap<Tx, Set<string>>();

/**
 * True the first time a transaction claims a staging table. A staging table is emptied only at commit
 * (emptying it with a DELETE … RETURNING as it is read cost more server time than the INSERT it feeds), so it
 * is filled at most once per transaction; later rows for the same table in that transaction are unnested.
 */
export function claimStaging(tx: Tx, s: Staging): boolean {
  let names = filled.get(tx);
  if (!names) filled.set(tx, (names = new Set()));
  if (names.has(s.name)) return false;
  names.add(s.name);
  return true;
}
