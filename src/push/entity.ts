import type { ReservedSql } from 'postgres';
import type { Logger } from '../log.ts';
import type { SourceClient } from '../source/client.ts';
import type { PushState } from '../warehouse/tables/push.ts';
import type { PushSettings } from './options.ts';
import {
  dueVerifications,
  holderPending,
  markApplied,
  markRefused,
  markSending,
  markUnsettled,
  openChangesOf,
  type DueRow,
  type OutboxRow,
} from './outbox.ts';
import { sendCertification, sendIndividual, sendVerifications, type SendContext, type Verdict } from './senders.ts';

/**
 * One entity's work: an individual by its key, a credential, or a company's verification results as one. It is
 * done under a Postgres advisory lock held on a connection of its own, so two workers never send for one
 * entity, and a worker that dies lets go of it at once; a change it left `sending` is then in doubt.
 */

export interface Entity {
  company: string;
  entity: string;
}

/** The entity standing for a company's verification results, sent in batches. */
export const VERIFICATIONS = '*verifications';

export const entityKey = (e: Entity) => `${e.company}/${e.entity}`;

type EntitySettings = Pick<PushSettings, 'warehouse' | 'sealer' | 'observers' | 'batchSize' | 'maxAttempts'>;

export class EntityWorker {
  readonly #settings: EntitySettings;
  readonly #log: Logger;

  constructor(settings: EntitySettings, log: Logger) {
    this.#settings = settings;
    this.#log = log;
  }

  /** Steps through the entity's changes while it holds the entity's lock; nothing when another worker holds it. */
  async work(e: Entity, client: SourceClient, stopped: () => boolean): Promise<void> {
    const wh = this.#settings.warehouse;
    const conn = await wh.sql.reserve();
    try {
      if (!(await claimEntity(conn, e))) return;
      try {
        const ctx: SendContext = {
          client,
          warehouse: wh,
          company: e.company,
          sealer: this.#settings.sealer,
          log: this.#log,
        };
        while (!stopped() && (await this.#sendEntity(conn, e, ctx)));
      } finally {
        await releaseEntity(conn, e);
      }
    } finally {
      conn.release();
    }
  }

  /** One step: the entity's first open change (with the queued updates after it, for an individual). True when something was sent. */
  async #sendEntity(conn: ReservedSql, e: Entity, ctx: SendContext): Promise<boolean> {
    const wh = this.#settings.warehouse;
    if (e.entity === VERIFICATIONS)
      return this.#sendVerifications(await dueVerifications(conn, wh, e.company, this.#settings.batchSize), ctx);
    const open = await openChangesOf(conn, wh, e.company, e.entity);
    const head = open[0];
    if (!head?.due || (await holderPending(conn, wh, head))) return false;
    // Whoever left it `sending` is gone (we hold the entity's lock): its answer is lost.
    const inDoubt = head.status !== 'queued' || head.attempts > 0;
    if (head.kind === 'individual') await this.#sendIndividual(inDoubt ? [head] : queuedUpdates(open), inDoubt, ctx);
    else {
      const [marked] = await markSending(wh.sql, wh, [head.id]);
      await this.#settle([marked!], await sendCertification(ctx, head.payload, inDoubt));
    }
    return true;
  }

  /** An individual's changes as one: their payloads merged, the latest SSN, the others coalesced into the last. */
  async #sendIndividual(group: readonly DueRow[], inDoubt: boolean, ctx: SendContext): Promise<void> {
    const last = group[group.length - 1]!;
    const marked = await markSending(
      ctx.warehouse.sql,
      ctx.warehouse,
      group.map((r) => r.id),
      group.length > 1 ? last.id : undefined,
    );
    const payload = Object.assign({}, ...group.map((r) => r.payload)) as Record<string, unknown>;
    const sealed = [...group].reverse().find((r) => r.sealed)?.sealed ?? null;
    await this.#settle(marked, await sendIndividual(ctx, payload, sealed, inDoubt));
  }

  /** A batch of verification results; those that share a verdict are settled together. */
  async #sendVerifications(due: readonly DueRow[], ctx: SendContext): Promise<boolean> {
    if (due.length === 0) return false;
    const inDoubt = due.filter((r) => r.status !== 'queued');
    if (inDoubt.length > 0)
      this.#log.info(
        { company: ctx.company, count: inDoubt.length },
        'verification results in doubt: resending (one result per RequestId)',
      );
    const marked = await markSending(
      ctx.warehouse.sql,
      ctx.warehouse,
      due.map((r) => r.id),
    );
    const verdicts = await sendVerifications(ctx, marked);
    const groups = new Map<string, { v: Verdict; rows: OutboxRow[] }>();
    for (const r of marked) {
      const v = verdicts.get(r.id)!;
      const key = JSON.stringify(v);
      groups.set(key, { v, rows: [...(groups.get(key)?.rows ?? []), r] });
    }
    for (const g of groups.values()) await this.#settle(g.rows, g.v);
    return true;
  }

  /** Stores what the service's answer makes of the changes, and reports it. */
  async #settle(rows: readonly OutboxRow[], v: Verdict): Promise<void> {
    const status = await this.#store(rows, v);
    const ids = rows.map((r) => r.id);
    for (const r of rows) {
      if (status === 'queued') continue;
      this.#settings.observers?.emit('push', {
        company: r.company_key,
        kind: r.kind,
        outcome: status,
        latencyMs: Date.now() - r.created_at.getTime(),
      });
    }
    const level = status === 'applied' ? 'info' : 'warn';
    this.#log[level](
      { company: rows[0]!.company_key, kind: rows[0]!.kind, ids, status, err: 'message' in v ? v.message : undefined },
      'push change',
    );
  }

  async #store(rows: readonly OutboxRow[], v: Verdict): Promise<Exclude<PushState, 'sending'>> {
    const wh = this.#settings.warehouse;
    const ids = rows.map((r) => r.id);
    if (v.outcome === 'applied') await markApplied(wh.sql, wh, ids, v);
    if (v.outcome === 'refused') await markRefused(wh.sql, wh, ids, v.message, v.fields);
    if (v.outcome === 'applied' || v.outcome === 'refused') return v.outcome;
    const attempts = Math.max(...rows.map((r) => r.attempts));
    // A change given up on while in doubt stays marked by its attempts: a retry looks before it sends.
    const giveUp = v.outcome === 'failed' || attempts >= this.#settings.maxAttempts;
    const status = giveUp ? 'failed' : v.outcome === 'in_doubt' ? 'in_doubt' : 'queued';
    await markUnsettled(wh.sql, wh, ids, { status, message: v.message, attempts });
    return status;
  }
}

/** Takes the entity's advisory lock on this connection, unless another worker holds it. */
async function claimEntity(conn: ReservedSql, e: Entity): Promise<boolean> {
  const [row] = await conn.unsafe<{ locked: boolean }[]>(
    `select pg_try_advisory_lock(hashtextextended($1, 0)) as locked`,
    [entityKey(e)],
  );
  return row!.locked;
}

async function releaseEntity(conn: ReservedSql, e: Entity): Promise<void> {
  await conn.unsafe(`select pg_advisory_unlock(hashtextextended($1, 0))`, [entityKey(e)]);
}

/** The individual's queued updates from the first, up to the first change of another kind or already tried. */
function queuedUpdates(open: readonly DueRow[]): DueRow[] {
  const out: DueRow[] = [];
  for (const r of open) {
    if (r.kind !== 'individual' || r.status !== 'queued' || r.attempts !== 0) break;
    out.push(r);
  }
  return out.length > 0 ? out : open.slice(0, 1);
}
