import type { Warehouse } from '../../src/warehouse/connection.ts';
import type { StoredProgress } from '../../src/warehouse/runs.ts';

/** A finished stream run as the runner records it, at a chosen time: for pages and charts over run history. */
export async function insertRun(
  wh: Warehouse,
  r: {
    company: string;
    stream: string;
    startedAt: Date;
    finishedAt: Date;
    requests: number;
    rows: number;
    outcome?: string;
  },
): Promise<number> {
  const [row] = await wh.sql<{ id: number }[]>`
    insert into ${wh.sql(wh.schema)}.sync_runs (company_key, stream, started_at, finished_at, outcome, requests, rows)
    values (${r.company}, ${r.stream}, ${r.startedAt}, ${r.finishedAt}, ${r.outcome ?? 'ok'}, ${r.requests}, ${r.rows})
    returning id::int as id`;
  return row!.id;
}

/**
 * A run with the progress it stored (pages done by a time), as the runner keeps it every few seconds: still going,
 * or closed as interrupted without its counts, as when its process died.
 */
export async function insertRunningRun(
  wh: Warehouse,
  r: { company: string; stream: string; startedAt: Date; pagesDone: number; at: Date; interruptedAt?: Date },
): Promise<number> {
  const progress: StoredProgress = {
    basis: 'windows',
    fraction: 0.5,
    pagesDone: r.pagesDone,
    pagesLeft: r.pagesDone,
    perSecond: null,
    at: r.at.toISOString(),
  };
  const [row] = await wh.sql<{ id: number }[]>`
    insert into ${wh.sql(wh.schema)}.sync_runs (company_key, stream, started_at, finished_at, outcome, details)
    values (${r.company}, ${r.stream}, ${r.startedAt}, ${r.interruptedAt ?? null}, ${r.interruptedAt ? 'interrupted' : null}, ${wh.sql.json({ progress })})
    returning id::int as id`;
  return row!.id;
}

/** A pushed change in the outbox with a given status, received at a chosen time. */
export async function insertPushedChange(
  wh: Warehouse,
  c: { company: string; status: string; createdAt: Date; n: number },
): Promise<void> {
  const [{ seq } = { seq: 0 }] = await wh.sql<
    { seq: number }[]
  >`select count(*)::int as seq from ${wh.sql(wh.schema)}.push_outbox`;
  for (let i = 0; i < c.n; i++) {
    const id = `change-${seq + i}`;
    await wh.sql`
      insert into ${wh.sql(wh.schema)}.push_outbox (company_key, kind, change_id, entity_key, seq, payload, status, created_at, updated_at)
      values (${c.company}, 'individual', ${id}, ${`en:${id}`}, 1, ${wh.sql.json({ EmployeeNumber: id })}, ${c.status}, ${c.createdAt}, ${c.createdAt})`;
  }
}
