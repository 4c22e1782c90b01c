import type { Pipeline } from './pipeline.ts';
import { scrub } from './mapper.ts';
import { textArray } from './encoding.ts';
import type { KeyedRefusal } from './page-map.ts';

/**
 * Records that failed their schema (sync_rejects): one row per company, stream, record and reason, however often
 * the record is read, with when it was first and last refused and how often. A page that writes a record resolves
 * its open rejects; a later refusal opens the row again.
 */

export interface PageRejects {
  companyKey: string;
  stream: string;
  runId?: number;
  /** The page's refusals, each keyed once by the mapper (page-map.ts). */
  rejects: readonly KeyedRefusal[];
  /** Key text (record-keys.ts keyText) of every record the page writes. */
  written: readonly string[];
}

/** `payload:` and the md5 of the stored payload: the key of a refused record whose payload names none. */
const KEY = `coalesce(r.key, 'payload:' || md5(r.raw::jsonb::text))`;

/**
 * Sends, in the page's transaction, one statement that records the page's refusals (once each per key and reason)
 * and one that resolves the open rejects of the records it writes. A row refused by this very page has `seen_at`
 * of this transaction and stays open.
 */
export function sendRejects(pipe: Pipeline, schema: string, p: PageRejects): void {
  const table = `"${schema}"."sync_rejects"`;
  if (p.rejects.length > 0) {
    pipe.send(
      `insert into ${table} as s (company_key, stream, record_key, raw, reason, run_id)
select distinct on (${KEY}, r.reason) $1, $2, ${KEY}, r.raw::jsonb, r.reason, $3::bigint
from unnest($4::text[], $5::text[], $6::text[]) with ordinality as r(key, raw, reason, n)
order by ${KEY}, r.reason, r.n desc
on conflict (company_key, stream, record_key, reason) do update set
  raw = excluded.raw, seen_at = excluded.seen_at, run_id = excluded.run_id, times_seen = s.times_seen + 1, resolved_at = null`,
      [
        p.companyKey,
        p.stream,
        p.runId ?? null,
        textArray(p.rejects.map((r) => r.key)),
        textArray(p.rejects.map((r) => JSON.stringify(scrub(r.raw) ?? null))),
        textArray(p.rejects.map((r) => r.reason)),
      ],
    );
  }
  if (p.written.length > 0) {
    pipe.send(
      `update ${table} set resolved_at = now()
where company_key = $1 and stream = $2 and record_key = any($3::text[]) and resolved_at is null and seen_at < now()`,
      [p.companyKey, p.stream, textArray(p.written)],
    );
  }
}
