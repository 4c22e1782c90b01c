import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { SyncRunOutcome } from './tables/bookkeeping.ts';
import type { Warehouse } from './connection.ts';
import { recordEvent } from './events.ts';
import { addRunUsage } from './usage.ts';
import type { ProgressEvent } from '../observers.ts';
import type { WarehouseTables } from './schema.ts';

/**
 * Stream runs and the process running them. A run is `running` (no `finished_at`) while its process lives and
 * beats; a process that died (SIGKILL, a lost machine) cannot say so, so the next one that looks finds its runs
 * and records them `interrupted`.
 */

/** How often a process says its runs still go on. */
export const HEARTBEAT_MS = 10_000;
/** A run whose process has not beaten for this long is taken for dead (a process on another machine). */
export const STALE_AFTER_MS = 6 * HEARTBEAT_MS;

/** This process, as written in each run it starts: host, pid, and when it started (pids are reused). */
export const OWNER = { host: hostname(), pid: process.pid, since: Math.round(Date.now() - process.uptime() * 1000) };

export type SyncRun = WarehouseTables['syncRuns']['$inferSelect'];

/** Why a run is recorded interrupted by another process, or at the end of its own process's stop. */
const ENDED_BEFORE = 'the process running it ended before the run did';

const t = (wh: Warehouse) => wh.sql`${wh.sql(wh.schema)}.sync_runs`;

/**
 * Inserts a running run owned by this process. `syncStartedAt` is when the sync it belongs to began: an
 * interrupted sync resumed by later processes is one sync, however many processes it took.
 */
export async function openRun(
  wh: Warehouse,
  o: { companyKey: string; stream: string; syncStartedAt?: Date },
): Promise<number> {
  const details = {
    owner: OWNER,
    opener: unrecorded(wh).opener,
    heartbeat: new Date().toISOString(),
    ...(o.syncStartedAt ? { syncStartedAt: o.syncStartedAt.toISOString() } : {}),
  };
  const [row] = await wh.sql<{ id: string }[]>`
    insert into ${t(wh)} (company_key, stream, started_at, details)
    values (${o.companyKey}, ${o.stream}, now(), ${wh.sql.json(details)}) returning id`;
  const id = Number(row!.id);
  unrecorded(wh).ids.add(id);
  return id;
}

/**
 * A run, by its key: the company's first, so that on Citus a statement on it runs on the company's shard alone.
 */
export interface RunKey {
  companyKey: string;
  id: number;
}

export interface RunOutcome {
  outcome: SyncRunOutcome;
  requests?: number;
  rows?: number;
  rejects?: number;
  error?: string;
}

/**
 * Records the end of a run. Anything else in the outcome (deleted, durationMs, ...) is kept in `details`. A
 * stopping process closes the warehouse once the ends of its runs are recorded, or given up on (`abandonEnd`).
 */
export async function finishRun(wh: Warehouse, run: RunKey, o: RunOutcome): Promise<void> {
  const { id, companyKey } = run;
  const { outcome, requests = 0, rows = 0, rejects = 0, error = null, ...details } = o;
  await wh.sql`
    update ${wh.sql(wh.schema)}.sync_runs
    set finished_at = now(), outcome = ${outcome}, requests = ${requests}, rows = ${rows}, rejects = ${rejects},
        error = ${error as string | null},
        -- When its sync began outlives the run: a resumption of that sync reads it (findResumption).
        details = case when details ? 'syncStartedAt'
          then ${wh.sql.json(details as never)}::jsonb || jsonb_set('{}'::jsonb, '{syncStartedAt}', details->'syncStartedAt')
          else ${wh.sql.json(details as never)}::jsonb end
    where company_key = ${companyKey} and id = ${id}`;
  await addRunUsage(wh, companyKey, id);
  if (outcome === 'ok' || outcome === 'failed') await recordHealthChange(wh, run, outcome, error);
  endSettled(wh, id);
}

/** The end of the run cannot be recorded (the warehouse stayed away): the next process records it interrupted. */
export function abandonEnd(wh: Warehouse, id: number): void {
  endSettled(wh, id);
}

interface Unrecorded {
  /** Names the warehouse client in the runs it opens: a process may hold more than one. */
  opener: string;
  ids: Set<number>;
  /** Runs being opened: their insert may be waiting for a warehouse that restarts. */
  opening: number;
  waiting: (() => void)[];
}

/**
 * The runs this process opened and has not yet recorded the end of, by warehouse client (a fenced copy of a
 * warehouse shares its client). A stopping process waits for them before it closes the warehouse, so that the
 * connections do not end under a run's last write.
 */
const unrecordedByClient = new WeakMap<object, Unrecorded>();

function unrecorded(wh: Warehouse): Unrecorded {
  let u = unrecordedByClient.get(wh.sql);
  if (!u) unrecordedByClient.set(wh.sql, (u = { opener: randomUUID(), ids: new Set(), opening: 0, waiting: [] }));
  return u;
}

const settled = (u: Unrecorded) => u.ids.size === 0 && u.opening === 0;

function endSettled(wh: Warehouse, id: number): void {
  const u = unrecorded(wh);
  u.ids.delete(id);
  if (settled(u)) for (const resolve of u.waiting.splice(0)) resolve();
}

/**
 * A run is about to be opened; the returned function says the attempt is over (opened, or given up). Until then
 * a stopping process does not close the warehouse: a run whose insert waited through a Postgres restart, and
 * landed after the other runs had ended, would otherwise be left open by a process that exits 0.
 */
export function runOpening(wh: Warehouse): () => void {
  const u = unrecorded(wh);
  u.opening++;
  let over = false;
  return () => {
    if (over) return;
    over = true;
    u.opening--;
    if (settled(u)) for (const resolve of u.waiting.splice(0)) resolve();
  };
}

/** Resolves once every run this process opened on the warehouse has its end recorded, or given up on, and none is being opened. */
export function runEndsRecorded(wh: Warehouse): Promise<void> {
  const u = unrecorded(wh);
  return settled(u) ? Promise.resolve() : new Promise((resolve) => u.waiting.push(resolve));
}

/**
 * A stream starting to fail, or recovering, goes on its company's timeline: compared with the outcome of the
 * stream's run before this one (an interrupted run says neither), not every run.
 */
async function recordHealthChange(
  wh: Warehouse,
  key: RunKey,
  outcome: 'ok' | 'failed',
  error: string | null,
): Promise<void> {
  const { id, companyKey } = key;
  const [run] = await wh.sql<{ company: string; stream: string; before: string | null }[]>`
    select r.company_key as company, r.stream, (
      select p.outcome from ${t(wh)} p
      where p.company_key = ${companyKey} and p.stream = r.stream and p.started_at < r.started_at and p.outcome in ('ok', 'failed')
      order by p.started_at desc limit 1) as before
    from ${t(wh)} r where r.company_key = ${companyKey} and r.id = ${id}`;
  if (!run) return;
  if (outcome === 'failed' && run.before !== 'failed') {
    await recordEvent(wh, {
      companyKey: run.company,
      stream: run.stream,
      event: 'stream_failing',
      detail: { runId: id, error: (error ?? '').slice(0, 500) },
    });
  } else if (outcome === 'ok' && run.before === 'failed') {
    await recordEvent(wh, {
      companyKey: run.company,
      stream: run.stream,
      event: 'stream_recovered',
      detail: { runId: id },
    });
  }
}

/** A running run's progress as stored in `sync_runs.details.progress`: where it stood at `at`. */
export type StoredProgress = Omit<ProgressEvent, 'company' | 'stream'> & { at: string };

/**
 * Stores where a running run stands, in its `sync_runs` row, for `status` (another process) to read. A run
 * that ended keeps none: its row says what it did.
 */
export async function storeRunProgress(wh: Warehouse, run: RunKey, progress: StoredProgress): Promise<void> {
  await wh.sql`
    update ${wh.sql(wh.schema)}.sync_runs
    set details = jsonb_set(coalesce(details, '{}'::jsonb), '{progress}', ${wh.sql.json(progress)})
    where company_key = ${run.companyKey} and id = ${run.id} and finished_at is null`;
}

/** Marks the given runs as alive now. */
export async function beat(wh: Warehouse, runs: readonly RunKey[]): Promise<void> {
  if (runs.length === 0) return;
  await wh.sql`
    update ${t(wh)} set details = jsonb_set(coalesce(details, '{}'::jsonb), '{heartbeat}', to_jsonb(now()))
    where (company_key, id) in (select * from unnest(${runs.map((r) => r.companyKey)}::text[], ${runs.map((r) => String(r.id))}::bigint[]))
      and finished_at is null`;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as { code?: string }).code === 'EPERM';
  }
}

interface OpenRunRow {
  id: string;
  owner: { host?: string; pid?: number; since?: number } | null;
  stale: boolean;
}

/**
 * Records as `interrupted` the runs still open whose process is gone: on this host, a pid that no longer runs
 * (or runs a later process); anywhere, no heartbeat for STALE_AFTER_MS. Of one company (a sync about to start
 * its runs), or of all. Returns how many.
 */
export async function markInterruptedRuns(
  wh: Warehouse,
  except: ReadonlySet<number> = new Set(),
  companyKey?: string,
): Promise<number> {
  const open = await wh.sql<OpenRunRow[]>`
    select id, details->'owner' as owner,
           coalesce((details->>'heartbeat')::timestamptz, started_at) < now() - ${`${STALE_AFTER_MS} milliseconds`}::interval as stale
    from ${t(wh)} where finished_at is null ${companyKey === undefined ? wh.sql`` : wh.sql`and company_key = ${companyKey}`}`;
  const dead = open.filter((r) => {
    if (except.has(Number(r.id))) return false;
    const o = r.owner;
    if (o?.host === OWNER.host && typeof o.pid === 'number') {
      if (o.pid === OWNER.pid) return o.since !== OWNER.since;
      return !alive(o.pid);
    }
    return r.stale;
  });
  if (dead.length === 0) return 0;
  await wh.sql`
    update ${t(wh)} set finished_at = now(), outcome = 'interrupted', error = ${ENDED_BEFORE}
    where id = any(${dead.map((r) => r.id)}::bigint[]) and finished_at is null
      ${companyKey === undefined ? wh.sql`` : wh.sql`and company_key = ${companyKey}`}`;
  return dead.length;
}

/**
 * Records as interrupted the runs still open that this warehouse client opened. A run's insert can land while its
 * answer is cut off by a warehouse restart: the process gives the run up without its id, and would leave it open.
 * Called at the end of a stop, once the runs the client knows of have recorded their ends. Returns how many.
 */
export async function closeOwnOpenRuns(wh: Warehouse): Promise<number> {
  const closed = await wh.sql`
    update ${t(wh)} set finished_at = now(), outcome = 'interrupted', error = ${ENDED_BEFORE}
    where finished_at is null and details->>'opener' = ${unrecorded(wh).opener}
    returning id`;
  return closed.length;
}

/** An interrupted sync older than this is not resumed: its streams are all read again. */
export const RESUME_WITHIN_MS = 60 * 60_000;

export interface Resumption {
  /** When the interrupted sync began. */
  since: Date;
  /** Streams it already read through to the end since then: the resumed sync leaves them out. */
  done: Set<string>;
}

/**
 * The interrupted sync a sync of these streams resumes, if any: one of them was interrupted last time (its
 * process died, or shut down), less than RESUME_WITHIN_MS ago. Whatever else the interrupted sync (or an earlier
 * resumption of it) finished, the resumption does not read again.
 */
export async function findResumption(
  wh: Warehouse,
  companyKey: string,
  streams: readonly string[],
): Promise<Resumption | undefined> {
  const latest = await wh.sql<{ stream: string; outcome: string | null; started_at: Date; sync_started_at: Date }[]>`
    select distinct on (stream) stream, outcome, started_at,
           coalesce((details->>'syncStartedAt')::timestamptz, started_at) as sync_started_at
    from ${t(wh)} where company_key = ${companyKey} and stream = any(${streams as string[]}) and finished_at is not null
    order by stream, started_at desc`;
  const interrupted = latest.filter((r) => r.outcome === 'interrupted');
  if (interrupted.length === 0) return undefined;
  const since = new Date(Math.min(...interrupted.map((r) => r.sync_started_at.getTime())));
  if (Date.now() - since.getTime() > RESUME_WITHIN_MS) return undefined;
  const done = new Set(latest.filter((r) => r.outcome === 'ok' && r.started_at >= since).map((r) => r.stream));
  return { since, done };
}

/**
 * When the latest successful run of a stream started, if that was at or after `since` or within `withinMs` of
 * now: a read that recent is as fresh as the one a caller would make.
 */
export async function freshRunStart(
  wh: Warehouse,
  o: { companyKey: string; stream: string; since: Date; withinMs: number },
): Promise<Date | undefined> {
  const [row] = await wh.sql<{ at: Date | null }[]>`
    select max(started_at) as at from ${t(wh)}
    where company_key = ${o.companyKey} and stream = ${o.stream} and outcome = 'ok'
      and started_at >= least(${o.since}::timestamptz, now() - ${`${Math.max(0, Math.round(o.withinMs))} milliseconds`}::interval)`;
  return row?.at ? new Date(row.at) : undefined;
}
