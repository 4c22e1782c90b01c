import type { Writable } from 'node:stream';
import { encode } from '../src/warehouse/encoding.ts';
import type { Row, TableInfo } from '../src/warehouse/catalog.ts';

/**
 * Rows in COPY's text format and the end of a COPY, for floor-process.ts's `copy` program (one COPY per table
 * straight into it). The sync writes by unnested parameter arrays only; this is a measure of the alternative.
 */

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

/** Writes a COPY's whole text and ends it; settles with the server's CommandComplete for the COPY ('finish'). */
export function endCopy(writable: Writable, text: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    writable.once('error', reject);
    writable.end(text, () => resolve());
  });
}
