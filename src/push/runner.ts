import type { EventEmitter } from 'node:events';
import type { RedisHealth } from '../redis-health.ts';
import { createHash, createHmac } from 'node:crypto';
import { Queue, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import type { ReservedSql } from 'postgres';
import type { Logger } from '../log.ts';
import type { Observers } from '../observers.ts';
import type { SourceClient } from '../source/client.ts';
import type { Warehouse } from '../warehouse/index.ts';
import type { PushState } from '../warehouse/tables/push.ts';
import { PUSH_CHANNEL, statusOf, table, type OutboxRow } from './outbox.ts';
import type { Sealer } from './secret.ts';
import { sendCertification, sendIndividual, sendVerifications, type SendContext, type Verdict } from './senders.ts';

/**
 * The push worker. Postgres decides what may run: per company, the first open change of each entity (a
 * credential also waits for its holder's open changes), and verification results as one batch. An entity is
 * worked on under a Postgres advisory lock held on its own connection, so two workers never send for one
 * entity, and a worker that dies lets go of it at once; a change it left `sending` is then in doubt.
 * Without Redis the runner works the entities itself; with Redis a sweeper puts them on the BullMQ `push`
 * queue (ids only, never a payload) and BullMQ workers take them.
 */

export const PUSH_QUEUE = 'push';
const VERIFICATIONS = '*verifications';

export interface PushRunnerOptions {
  warehouse: Warehouse;
  /** The client of each company, by company key. */
  clients: ReadonlyMap<string, SourceClient>;
  sealer: Sealer;
  log: Logger;
  observers?: Observers;
  /** With a connection, the work goes through the BullMQ `push` queue. */
  redis?: Redis;
  /** Hears the push queue's connection errors, so an outage is one line per process (src/redis-health.ts). */
  health?: RedisHealth;
  /** BullMQ key prefix (default BullMQ's own). */
  prefix?: string;
  /** Entities worked on at once by this process. Default 4. */
  concurrency?: number;
  /** How often Postgres is swept for work besides notifications. Default 1000 ms. */
  sweepMs?: number;
  /** Verification results per ValidateSubmission. Default 100. */
  batchSize?: number;
  /** Attempts before a change that keeps failing is `failed`. Default 12. */
  maxAttempts?: number;
  webhook?: { url: string; token: string };
}

export interface PushRunner {
  start(): Promise<void>;
  stop(): Promise<void>;
}

interface Work {
  company: string;
  entity: string;
}

const OPEN = `status in ('queued', 'sending', 'in_doubt')`;

export function backoffMs(attempts: number): number {
  const cap = Math.min(30_000, 250 * 2 ** Math.max(0, attempts - 1));
  return Math.round(cap / 2 + Math.random() * (cap / 2));
}

const lockKey = (w: Work) => `${w.company}/${w.entity}`;

export function createPushRunner(o: PushRunnerOptions): PushRunner {
  const wh = o.warehouse;
  const t = table(wh);
  const log = o.log.child({ component: 'push' });
  const concurrency = o.concurrency ?? 4;
  const maxAttempts = o.maxAttempts ?? 12;
  const inFlight = new Set<string>();
  /** Runnable entities the last sweep found beyond the concurrency (in-process only): launched as others finish, without a sweep each. */
  let backlog: Work[] = [];
  let stopped = false;
  let sweepTimer: NodeJS.Timeout | undefined;
  let unlisten: (() => Promise<void>) | undefined;
  let queue: Queue<Work> | undefined;
  let worker: Worker<Work> | undefined;
  let workerConnection: Redis | undefined;
  let sweeping: Promise<void> | undefined;
  let again = false;
  const running = new Set<Promise<void>>();

  /** Entities with a change that may run now, oldest first. */
  async function runnable(): Promise<Work[]> {
    const rows = await wh.sql.unsafe<{ company_key: string; entity_key: string; kind: string }[]>(
      `select distinct on (o.company_key, case when o.kind = 'verification' then '' else o.entity_key end)
              o.company_key, o.entity_key, o.kind, o.id
       from ${t} o
       where o.${OPEN} and o.next_attempt_at <= now()
         and not exists (select 1 from ${t} p where p.company_key = o.company_key and p.entity_key = o.entity_key and p.${OPEN} and p.seq < o.seq)
         and (o.holder_key is null or not exists (
               select 1 from ${t} h where h.company_key = o.company_key and h.entity_key = o.holder_key and h.kind = 'individual' and h.${OPEN} and h.id < o.id))
       order by o.company_key, case when o.kind = 'verification' then '' else o.entity_key end, o.id
       limit 500`,
    );
    return rows
      .filter((r) => o.clients.has(r.company_key))
      .map((r) => ({ company: r.company_key, entity: r.kind === 'verification' ? VERIFICATIONS : r.entity_key }));
  }

  async function finish(rows: readonly OutboxRow[], v: Verdict): Promise<void> {
    const ids = rows.map((r) => r.id);
    let status: PushState;
    switch (v.outcome) {
      case 'applied':
        status = 'applied';
        await wh.sql.unsafe(
          `update ${t} set status = 'applied', sealed = null, error = null, fields = null, applied_at = now(), updated_at = now(),
             individual_id = coalesce($2, individual_id), service_id = coalesce($3, service_id),
             individual_certification_id = coalesce($4, individual_certification_id), notify_next_at = now()
           where id = any($1::bigint[])`,
          [ids, v.individualId ?? null, v.serviceId ?? null, v.individualCertificationId ?? null],
        );
        break;
      case 'refused':
        status = 'refused';
        await wh.sql.unsafe(
          `update ${t} set status = 'refused', sealed = null, error = $2, fields = $3::jsonb, updated_at = now(), notify_next_at = now()
           where id = any($1::bigint[])`,
          [ids, v.message, (v.fields ?? null) as never],
        );
        break;
      default: {
        const attempts = Math.max(...rows.map((r) => r.attempts));
        const giveUp = v.outcome === 'failed' || attempts >= maxAttempts;
        // A change given up on while in doubt stays marked by its attempts: a retry looks before it sends.
        status = giveUp ? 'failed' : v.outcome === 'in_doubt' ? 'in_doubt' : 'queued';
        await wh.sql.unsafe(
          `update ${t} set status = $2, error = $3, updated_at = now(), next_attempt_at = now() + ($4::int * interval '1 millisecond'),
             notify_next_at = case when $2 = 'failed' then now() else notify_next_at end
           where id = any($1::bigint[])`,
          [ids, status, v.message, backoffMs(attempts)],
        );
      }
    }
    for (const r of rows) {
      if (status === 'queued') continue;
      o.observers?.emit('push', { company: r.company_key, kind: r.kind, outcome: status as 'applied', latencyMs: Date.now() - r.created_at.getTime() });
    }
    const level = status === 'applied' ? 'info' : 'warn';
    log[level]({ company: rows[0]!.company_key, kind: rows[0]!.kind, ids, status, err: 'message' in v ? v.message : undefined }, 'push change');
  }

  /** Marks the rows `sending` (one more attempt) before the request: a crash from here on leaves them in doubt. */
  async function sending(rows: readonly OutboxRow[], coalescedInto?: number): Promise<OutboxRow[]> {
    return wh.sql.unsafe<OutboxRow[]>(
      `update ${t} set status = 'sending', attempts = attempts + 1, updated_at = now(),
         coalesced_into = case when id = $2 then null else $2 end
       where id = any($1::bigint[]) returning *`,
      [rows.map((r) => r.id), coalescedInto ?? null],
    );
  }

  /** The open changes of an entity, each saying whether its next attempt is due (read with them: one statement fewer per change). */
  async function openRows(conn: ReservedSql, w: Work): Promise<(OutboxRow & { due: boolean })[]> {
    return w.entity === VERIFICATIONS
      ? conn.unsafe<(OutboxRow & { due: boolean })[]>(
          `select *, true as due from ${t} where company_key = $1 and kind = 'verification' and ${OPEN} and next_attempt_at <= now() order by id limit $2`,
          [w.company, o.batchSize ?? 100],
        )
      : conn.unsafe<(OutboxRow & { due: boolean })[]>(
          `select *, next_attempt_at <= now() as due from ${t} where company_key = $1 and entity_key = $2 and ${OPEN} order by seq`,
          [w.company, w.entity],
        );
  }

  /** A credential waits while its holder has an older open change. */
  async function holderPending(conn: ReservedSql, r: OutboxRow): Promise<boolean> {
    if (!r.holder_key) return false;
    const rows = await conn.unsafe(
      `select 1 from ${t} where company_key = $1 and entity_key = $2 and kind = 'individual' and ${OPEN} and id < $3 limit 1`,
      [r.company_key, r.holder_key, r.id],
    );
    return rows.length > 0;
  }

  /** One step on an entity: its first open change (with the queued updates after it, for an individual). True when something was done. */
  async function step(conn: ReservedSql, w: Work, ctx: SendContext): Promise<boolean> {
    const open = await openRows(conn, w);
    if (open.length === 0) return false;
    if (w.entity === VERIFICATIONS) {
      const inDoubt = open.filter((r) => r.status !== 'queued');
      if (inDoubt.length > 0) log.info({ company: w.company, count: inDoubt.length }, 'verification results in doubt: resending (one result per RequestId)');
      const marked = await sending(open);
      const verdicts = await sendVerifications(ctx, marked);
      const groups = new Map<string, { v: Verdict; rows: OutboxRow[] }>();
      for (const r of marked) {
        const v = verdicts.get(r.id)!;
        const key = JSON.stringify(v);
        groups.set(key, { v, rows: [...(groups.get(key)?.rows ?? []), r] });
      }
      for (const g of groups.values()) await finish(g.rows, g.v);
      return true;
    }
    const head = open[0]!;
    if (!head.due || (await holderPending(conn, head))) return false;
    // Whoever left it `sending` is gone (we hold the entity's lock): its answer is lost.
    const inDoubt = head.status !== 'queued' || head.attempts > 0;
    if (head.kind === 'individual') {
      const group = inDoubt ? [head] : takeWhile(open, (r) => r.kind === 'individual' && r.status === 'queued' && r.attempts === 0);
      const last = group[group.length - 1]!;
      const marked = await sending(group, group.length > 1 ? last.id : undefined);
      const payload = Object.assign({}, ...group.map((r) => r.payload)) as Record<string, unknown>;
      const sealed = [...group].reverse().find((r) => r.sealed)?.sealed ?? null;
      await finish(marked, await sendIndividual(ctx, payload, sealed, inDoubt));
      return true;
    }
    const [marked] = await sending([head]);
    await finish([marked!], await sendCertification(ctx, head.payload, inDoubt));
    return true;
  }

  async function work(w: Work): Promise<void> {
    const client = o.clients.get(w.company);
    if (!client) return;
    const conn = await wh.sql.reserve();
    try {
      const [{ locked }] = (await conn.unsafe(`select pg_try_advisory_lock(hashtextextended($1, 0)) as locked`, [lockKey(w)])) as unknown as [{ locked: boolean }];
      if (!locked) return;
      try {
        const ctx: SendContext = { client, warehouse: wh, company: w.company, sealer: o.sealer, log };
        while (!stopped && (await step(conn, w, ctx)));
      } finally {
        await conn.unsafe(`select pg_advisory_unlock(hashtextextended($1, 0))`, [lockKey(w)]);
      }
    } finally {
      conn.release();
    }
  }

  function launch(w: Work): void {
    const key = lockKey(w);
    if (inFlight.has(key) || inFlight.size >= concurrency || stopped) return;
    inFlight.add(key);
    const p = work(w)
      .catch((err: unknown) => log.error({ company: w.company, err: err instanceof Error ? err.message : String(err) }, 'push work failed'))
      .finally(() => {
        inFlight.delete(key);
        running.delete(p);
        if (stopped) return;
        // A stale entry costs one read under its lock (nothing due: nothing done); a sweep reads the whole outbox.
        if (backlog.length > 0) fill();
        else kick();
      });
    running.add(p);
  }

  function fill(): void {
    while (backlog.length > 0 && inFlight.size < concurrency && !stopped) launch(backlog.shift()!);
  }

  const jobId = (w: Work) => `p${createHash('sha1').update(lockKey(w)).digest('hex')}`;

  /** Finds what may run and starts it here, or puts it on the queue. */
  async function sweep(): Promise<void> {
    const found = await runnable();
    if (queue) {
      await Promise.all(found.map((w) => queue!.add('entity', w, { jobId: jobId(w), removeOnComplete: true, removeOnFail: true })));
    } else {
      backlog = found.filter((w) => !inFlight.has(lockKey(w)));
      fill();
    }
    await notify();
  }

  function kick(): void {
    if (stopped) return;
    if (sweeping) {
      again = true;
      return;
    }
    sweeping = sweep()
      .catch((err: unknown) => log.error({ err: err instanceof Error ? err.message : String(err) }, 'push sweep failed'))
      .finally(() => {
        sweeping = undefined;
        if (again) {
          again = false;
          kick();
        }
      });
  }

  /** Delivers final states to the webhook, signed, with backoff until it answers 2xx. */
  async function notify(): Promise<void> {
    if (!o.webhook) return;
    const due = await wh.sql.unsafe<OutboxRow[]>(
      `select * from ${t} where notified_at is null and notify_next_at <= now() and status in ('applied', 'refused', 'failed') order by id limit 50`,
    );
    for (const r of due) {
      const body = JSON.stringify(statusOf(r));
      const signature = createHmac('sha256', o.webhook.token).update(body).digest('hex');
      let ok = false;
      try {
        const res = await fetch(o.webhook.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-signature': `sha256=${signature}` },
          body,
          signal: AbortSignal.timeout(10_000),
        });
        ok = res.ok;
        await res.body?.cancel();
      } catch {
        ok = false;
      }
      if (ok) await wh.sql.unsafe(`update ${t} set notified_at = now(), notify_attempts = notify_attempts + 1 where id = $1`, [r.id]);
      else {
        const delay = backoffMs(r.notify_attempts + 1);
        await wh.sql.unsafe(
          `update ${t} set notify_attempts = notify_attempts + 1, notify_next_at = now() + ($2::int * interval '1 millisecond') where id = $1`,
          [r.id, delay],
        );
      }
    }
  }

  return {
    async start() {
      stopped = false;
      if (o.redis) {
        const prefix = o.prefix ? { prefix: o.prefix } : {};
        queue = new Queue<Work>(PUSH_QUEUE, { connection: o.redis, ...prefix });
        workerConnection = o.redis.duplicate();
        worker = new Worker<Work>(PUSH_QUEUE, async (job) => work(job.data), { connection: workerConnection, concurrency, ...prefix });
        worker.on('failed', (_job, err) => log.error({ err: err.message }, 'push job failed'));
        for (const source of [queue, worker, workerConnection] as EventEmitter[]) {
          if (o.health) o.health.watch(source);
          else source.on('error', (err: Error) => log.warn({ err: err.message }, 'push queue connection error'));
        }
      }
      const listener = await wh.sql.listen(PUSH_CHANNEL, () => kick());
      unlisten = () => listener.unlisten();
      sweepTimer = setInterval(kick, o.sweepMs ?? 1000);
      kick();
    },
    async stop() {
      stopped = true;
      if (sweepTimer) clearInterval(sweepTimer);
      // Ctrl-C on a terminal stops the embedded Postgres too: what cannot finish in time is left as a crash would
      // leave it (a change still `sending` is settled by a lookup at the next start).
      await atMost(STOP_WAIT_MS, unlisten?.().catch(() => undefined));
      await atMost(STOP_WAIT_MS, Promise.allSettled([sweeping, ...running]));
      await worker?.close();
      await queue?.close();
      await workerConnection?.quit().catch(() => undefined);
      worker = undefined;
      queue = undefined;
      workerConnection = undefined;
    },
  };
}

/** How long stop() waits for the listener and the changes in hand; with the warehouse's own 5 s to close, a stop stays well inside the 15 s a shutdown may take. */
const STOP_WAIT_MS = 2_000;

function atMost(ms: number, p: Promise<unknown> | undefined): Promise<unknown> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise((resolve) => (timer = setTimeout(resolve, ms)));
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

function takeWhile<T>(xs: readonly T[], ok: (x: T) => boolean): T[] {
  const out: T[] = [];
  for (const x of xs) {
    if (!ok(x)) break;
    out.push(x);
  }
  return out.length > 0 ? out : xs.slice(0, 1);
}
