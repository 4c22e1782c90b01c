import type { Warehouse } from './connection.ts';
import type { STREAM_OUTCOMES } from './tables/bookkeeping.ts';
import { recordEvent, recordEvents } from './events.ts';

/**
 * Re-syncs of one stream an operator asked for. Asking writes a request and puts it on the company's timeline;
 * the process that runs it claims every open request of that stream at once (asking twice while one waits is one
 * re-sync) and closes them with its outcome.
 */

export type ResyncVia = 'cli' | 'api' | 'dashboard';

export interface ResyncRequest {
  id: number;
  company: string;
  stream: string;
  via: string;
  requestedAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
  outcome: string | null;
}

const t = (wh: Warehouse) => wh.sql`${wh.sql(wh.schema)}.resync_requests`;
const COLUMNS = (wh: Warehouse) => wh.sql`
  id::int as id, company_key as company, stream, via, requested_at as "requestedAt", started_at as "startedAt",
  finished_at as "finishedAt", outcome`;

export async function requestResync(
  wh: Warehouse,
  r: { company: string; stream: string; via: ResyncVia },
): Promise<number> {
  const [row] = await wh.sql<{ id: number }[]>`
    insert into ${t(wh)} (company_key, stream, via) values (${r.company}, ${r.stream}, ${r.via}) returning id::int as id`;
  await recordEvent(wh, {
    companyKey: r.company,
    stream: r.stream,
    event: 'resync_requested',
    detail: { request: row!.id, via: r.via },
  });
  return row!.id;
}

/** Marks every open request of the stream started; answers their ids (none: nothing was asked, or another took them). */
export async function claimResyncs(wh: Warehouse, company: string, stream: string): Promise<number[]> {
  const rows = await wh.sql<{ id: number }[]>`
    update ${t(wh)} set started_at = now()
    where company_key = ${company} and stream = ${stream} and started_at is null returning id::int as id`;
  return rows.map((r) => r.id);
}

export async function finishResyncs(
  wh: Warehouse,
  company: string,
  stream: string,
  ids: readonly number[],
  outcome: { outcome: (typeof STREAM_OUTCOMES)[number]; rows?: number; deleted?: number; error?: string },
): Promise<void> {
  if (ids.length === 0) return;
  // One transaction: a reader that sees the requests done sees the timeline say so.
  await wh.sql.begin(async (sql) => {
    await sql`update ${sql(wh.schema)}.resync_requests set finished_at = now(), outcome = ${outcome.outcome}
      where company_key = ${company} and id = any(${ids as number[]}::bigint[])`;
    await recordEvents(
      wh,
      [{ companyKey: company, stream, event: 'resync_finished', detail: { requests: ids, ...outcome } }],
      sql,
    );
  });
}

/** Requests no process has taken yet, oldest first: what the running start (without Redis) picks up. */
export async function openResyncs(wh: Warehouse): Promise<ResyncRequest[]> {
  return wh.sql<ResyncRequest[]>`select ${COLUMNS(wh)} from ${t(wh)} where started_at is null order by id`;
}

/** A company's latest requests, newest first. */
export async function listResyncs(wh: Warehouse, company: string, limit = 20): Promise<ResyncRequest[]> {
  return wh.sql<
    ResyncRequest[]
  >`select ${COLUMNS(wh)} from ${t(wh)} where company_key = ${company} order by id desc limit ${limit}`;
}
