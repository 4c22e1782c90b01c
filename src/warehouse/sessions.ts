import { createHash, randomBytes } from 'node:crypto';
import type { Warehouse } from './connection.ts';

/**
 * Dashboard sessions in the warehouse, so they survive a restart and every `serve` replica knows them. The
 * cookie holds a random id; the table holds its hash, who signed in and their role. Deleting the row ends the
 * session on every server. Times come from the caller's clock, which tests move.
 */

export const SESSION_ROLES = ['viewer', 'operator', 'admin'] as const;
export type SessionRole = (typeof SESSION_ROLES)[number];

export interface SessionLimits {
  /** A session unused this long ends. */
  idleMs: number;
  /** A session ends this long after sign-in, however busy. */
  maxAgeMs: number;
}

export interface Session {
  actor: string;
  role: SessionRole;
}

/** Sessions kept at most: past this the least recently used ones end, so sign-ins cannot grow the table. */
export const MAX_SESSIONS = 10_000;
/** Use is written at most this often per session: a page load is a read, not a write. */
const TOUCH_MS = 60_000;

/** Sessions are kept by a hash of their id: the table holds nothing a cookie could be made from. */
const hashOf = (id: string) => createHash('sha256').update(id).digest('base64url');
const t = (wh: Warehouse) => wh.sql`${wh.sql(wh.schema)}.sessions`;

/** A new session; answers its id, for the cookie. Expired sessions go first, then any past the bound. */
export async function startSession(wh: Warehouse, s: Session, limits: SessionLimits, now: number): Promise<string> {
  await endExpired(wh, limits, now);
  const id = randomBytes(32).toString('base64url');
  const at = new Date(now);
  await wh.sql`insert into ${t(wh)} (session_hash, actor, role, signed_in_at, used_at)
               values (${hashOf(id)}, ${s.actor}, ${s.role}, ${at}, ${at})`;
  return id;
}

/** The session of a cookie, if it is live; its use is noted. */
export async function readSession(
  wh: Warehouse,
  id: string,
  limits: SessionLimits,
  now: number,
): Promise<Session | undefined> {
  const hash = hashOf(id);
  const [row] = await wh.sql<{ actor: string; role: SessionRole; signed_in_at: Date; used_at: Date }[]>`
    select actor, role, signed_in_at, used_at from ${t(wh)} where session_hash = ${hash}`;
  if (!row) return undefined;
  if (now - row.used_at.getTime() >= limits.idleMs || now - row.signed_in_at.getTime() >= limits.maxAgeMs) {
    await wh.sql`delete from ${t(wh)} where session_hash = ${hash}`;
    return undefined;
  }
  if (now - row.used_at.getTime() >= TOUCH_MS)
    await wh.sql`update ${t(wh)} set used_at = ${new Date(now)} where session_hash = ${hash}`;
  return { actor: row.actor, role: row.role };
}

/** Ends the session: its cookie stops working on every server. */
export async function endSession(wh: Warehouse, id: string): Promise<Session | undefined> {
  const [row] = await wh.sql<Session[]>`delete from ${t(wh)} where session_hash = ${hashOf(id)} returning actor, role`;
  return row;
}

export async function countSessions(wh: Warehouse): Promise<number> {
  const [row] = await wh.sql<{ n: number }[]>`select count(*)::int as n from ${t(wh)}`;
  return row!.n;
}

async function endExpired(wh: Warehouse, limits: SessionLimits, now: number): Promise<void> {
  await wh.sql`delete from ${t(wh)}
               where used_at <= ${new Date(now - limits.idleMs)} or signed_in_at <= ${new Date(now - limits.maxAgeMs)}`;
  await wh.sql`delete from ${t(wh)} where session_hash in (
                 select session_hash from ${t(wh)} order by used_at desc offset ${MAX_SESSIONS - 1})`;
}
