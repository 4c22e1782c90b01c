import { AsyncLocalStorage } from 'node:async_hooks';
import { userInfo } from 'node:os';
import type { Warehouse } from './connection.ts';
import { horizon, inBatches, PRUNE_BATCH } from './retention.ts';
import type { WarehouseTables } from './schema.ts';

/**
 * The audit trail: one row of `audit` per change an operator, a token or the housekeeping made, from the CLI, a
 * page or the API, with its outcome. `audited` is the one way a change is recorded: the function every entry
 * point of a change goes through wraps its work in it. A target names a stream, a role, fields, a ServiceId or
 * a token: never a personal value.
 */

/** What was done, in the CLI's words. A new change command adds its name here and wraps its work in `audited`. */
export const AUDIT_ACTIONS = [
  'companies add',
  'companies remove',
  'companies pause',
  'companies resume',
  'companies rotate-key',
  'companies streams',
  'personal-data set',
  'personal-data apply',
  'erase',
  'access grant',
  'access revoke',
  'schema classify',
  'schema new-fields',
  'resync',
  'run now',
  'queues',
  'push',
  'push retry',
  'push model add',
  'push model remove',
  'push model pause',
  'push model resume',
  'push model run',
  'tokens create',
  'tokens revoke',
  'sign-in',
  'sign-out',
  'housekeeping',
] as const;

export type AuditAction = (typeof AUDIT_ACTIONS)[number];

export const AUDIT_OUTCOMES = ['started', 'done', 'refused', 'failed'] as const;
export type AuditOutcome = (typeof AUDIT_OUTCOMES)[number];

export type AuditRow = WarehouseTables['audit']['$inferSelect'];

/**
 * Who acts: `oidc:<email or subject>` (signed in through the identity provider), `token:<name>` (an API token,
 * or the dashboard token), `cli:<operating-system user>`, or `system` (the housekeeping).
 */
export type Actor = string;

export const SYSTEM: Actor = 'system';

export const tokenActor = (name: string): Actor => `token:${name}`;

/** The operating-system user running the command. */
export function cliActor(): Actor {
  let name: string | undefined;
  try {
    name = userInfo().username;
  } catch {
    name = process.env.USER;
  }
  return `cli:${name || 'unknown'}`;
}

/** What a change is about: the company, and a target that is never a personal value. */
export interface AuditOn {
  company?: string | null;
  target?: string | null;
}

/** What an action learns while it runs: its company or target once known (an erasure's id), or that it was refused. */
export interface AuditNote {
  company(key: string): void;
  target(target: string): void;
  refused(reason: string): void;
}

const acting = new AsyncLocalStorage<Actor>();

/** The actor of the audited action this code runs in (events record it), if any. */
export const currentActor = (): Actor | undefined => acting.getStore();

const REASON_MAX = 500;
const t = (wh: Warehouse) => wh.sql`${wh.sql(wh.schema)}.audit`;

/** An error with a kind is a refusal the caller can act on; anything else is a fault, whose detail stays in the log. */
function outcomeOf(err: unknown): { outcome: AuditOutcome; reason: string } {
  const kind = (err as { kind?: unknown } | null)?.kind;
  if (err instanceof Error && typeof kind === 'string') return { outcome: 'refused', reason: err.message };
  return { outcome: 'failed', reason: 'an unexpected error (the log has it)' };
}

/**
 * Runs one change, recorded: a row `started` before it runs (no change goes unrecorded if the audit cannot be
 * written), then its outcome. An error is rethrown after it is recorded.
 */
export async function audited<T>(
  wh: Warehouse,
  actor: Actor,
  action: AuditAction,
  on: AuditOn,
  act: (note: AuditNote) => Promise<T>,
): Promise<T> {
  const [row] = await wh.sql<{ id: number }[]>`
    insert into ${t(wh)} (actor, action, company_key, target, outcome)
    values (${actor}, ${action}, ${on.company ?? null}, ${on.target ?? null}, 'started') returning id::int`;
  let company = on.company ?? null;
  let target = on.target ?? null;
  let refusal: string | undefined;
  const note: AuditNote = {
    company: (key) => {
      company = key;
    },
    target: (x) => {
      target = x;
    },
    refused: (reason) => {
      refusal = reason;
    },
  };
  const finish = (outcome: AuditOutcome, reason: string | null) =>
    wh.sql`update ${t(wh)} set outcome = ${outcome}, company_key = ${company}, target = ${target}, reason = ${reason?.slice(0, REASON_MAX) ?? null}
           where id = ${row!.id}`;
  let result: T;
  try {
    result = await acting.run(actor, () => act(note));
  } catch (err) {
    const o = outcomeOf(err);
    await finish(o.outcome, o.reason);
    throw err;
  }
  await finish(refusal === undefined ? 'done' : 'refused', refusal ?? null);
  return result;
}

/** One row for what has no work to wrap (a refused sign-in, a housekeeping run's counts). */
export async function recordAudit(
  wh: Warehouse,
  entry: AuditOn & { actor: Actor; action: AuditAction; outcome: AuditOutcome; reason?: string | null },
): Promise<void> {
  await wh.sql`
    insert into ${t(wh)} (actor, action, company_key, target, outcome, reason)
    values (${entry.actor}, ${entry.action}, ${entry.company ?? null}, ${entry.target ?? null}, ${entry.outcome},
            ${entry.reason?.slice(0, REASON_MAX) ?? null})`;
}

export interface AuditQuery {
  company?: string;
  /** An exact actor (`cli:ann`), or a prefix ending in `:` (`token:`). */
  actor?: string;
  since?: Date;
  /** Rows before this id (the previous page's last), newest first. */
  beforeId?: number;
  limit?: number;
}

/** The audit, newest first. */
export async function listAudit(wh: Warehouse, q: AuditQuery = {}): Promise<AuditRow[]> {
  const actor = q.actor?.endsWith(':')
    ? wh.sql`and starts_with(actor, ${q.actor})`
    : wh.sql`and actor = ${q.actor ?? ''}`;
  return wh.sql<AuditRow[]>`
    select id::int, at, actor, action, company_key, target, outcome, reason from ${t(wh)}
    where true
      ${q.company ? wh.sql`and company_key = ${q.company}` : wh.sql``}
      ${q.actor ? actor : wh.sql``}
      ${q.since ? wh.sql`and at >= ${q.since}` : wh.sql``}
      ${q.beforeId !== undefined ? wh.sql`and id < ${q.beforeId}` : wh.sql``}
    order by id desc limit ${q.limit ?? 100}`;
}

/** Deletes a company's audit rows, and those of no company, older than the horizon. */
export async function pruneAudit(wh: Warehouse, companyKey: string, days: number, size = PRUNE_BATCH): Promise<number> {
  return inBatches(async (limit) => {
    const rows = await wh.sql`
      delete from ${t(wh)} where id in (
        select id from ${t(wh)} where (company_key = ${companyKey} or company_key is null)
          and at < now() - ${horizon(days)}::interval limit ${limit})`;
    return rows.count;
  }, size);
}
