import { createHash, randomBytes } from 'node:crypto';
import type { Warehouse } from './connection.ts';

/**
 * Named API tokens (`wfsync tokens`): each has scopes and, optionally, the companies it may act on. A token is
 * shown once, when made, and stored only as a SHA-256 hash (it is 256 random bits: no slow hash is needed).
 * Every request looks its token up here, so a token revoked is refused by every server at its next request.
 */

export const TOKEN_SCOPES = ['push', 'read', 'admin'] as const;
export type TokenScope = (typeof TOKEN_SCOPES)[number];

export const TOKEN_NAME = /^[a-z0-9][a-z0-9_.-]{0,63}$/i;
/** `env` is WFS_PUSH_TOKEN and `dashboard` is WFS_DASHBOARD_TOKEN, as actors: no named token takes them. */
export const RESERVED_TOKEN_NAMES = ['env', 'dashboard'];

export interface ApiToken {
  name: string;
  scopes: TokenScope[];
  /** Empty: every company. */
  companies: string[];
  createdAt: Date;
  createdBy: string;
  lastUsedAt: Date | null;
}

export interface NewToken {
  name: string;
  scopes: readonly string[];
  companies?: readonly string[];
  /** Companies the environment names (WFS_COMPANIES): known before a start mirrors them into the table. */
  configured?: readonly string[];
  createdBy: string;
}

export type TokenErrorKind = 'invalid' | 'already_added' | 'unknown_token';

export class TokenError extends Error {
  override readonly name = 'TokenError';
  constructor(
    readonly kind: TokenErrorKind,
    message: string,
  ) {
    super(message);
  }
}

/** The hash a token is stored and looked up by. */
export const tokenHash = (token: string) => createHash('sha256').update(token).digest('base64url');

/** Last use is written at most this often per token: a busy HR system does not write a row per request. */
const TOUCH_EVERY = '1 minute';

const t = (wh: Warehouse) => wh.sql`${wh.sql(wh.schema)}.api_tokens`;

function check(n: NewToken): void {
  if (!TOKEN_NAME.test(n.name))
    throw new TokenError('invalid', `NAME "${n.name.slice(0, 64)}": letters, digits, ., - or _ (at most 64)`);
  if (RESERVED_TOKEN_NAMES.includes(n.name.toLowerCase()))
    throw new TokenError('invalid', `NAME "${n.name}" is reserved (${RESERVED_TOKEN_NAMES.join(', ')})`);
  if (n.scopes.length === 0) throw new TokenError('invalid', `--scope: give one of ${TOKEN_SCOPES.join(', ')}`);
  const bad = n.scopes.find((s) => !(TOKEN_SCOPES as readonly string[]).includes(s));
  if (bad !== undefined)
    throw new TokenError('invalid', `--scope "${bad.slice(0, 40)}": expected ${TOKEN_SCOPES.join(', ')}`);
}

/** Makes a token and answers it, the only time it is seen; its name must be new. */
export async function createToken(wh: Warehouse, n: NewToken): Promise<{ token: string; record: ApiToken }> {
  check(n);
  const unknown = await wh.sql<{ key: string }[]>`
    select k as key from unnest(${[...(n.companies ?? [])]}::text[]) k
    where not k = any(${[...(n.configured ?? [])]}::text[])
      and not exists (select 1 from ${wh.sql(wh.schema)}.companies c where c.company_key = k)`;
  if (unknown[0]) throw new TokenError('invalid', `--company "${unknown[0].key}" is not added (wfsync companies list)`);
  const token = `wfs_${randomBytes(32).toString('base64url')}`;
  const rows = await wh.sql<ApiTokenRow[]>`
    insert into ${t(wh)} (name, token_hash, scopes, companies, created_by)
    values (${n.name}, ${tokenHash(token)}, ${[...new Set(n.scopes)]}::text[], ${[...new Set(n.companies ?? [])]}::text[], ${n.createdBy})
    on conflict (name) do nothing returning ${columns(wh)}`;
  if (!rows[0]) throw new TokenError('already_added', `token ${n.name} exists already (wfsync tokens list)`);
  return { token, record: recordOf(rows[0]) };
}

export async function listTokens(wh: Warehouse): Promise<ApiToken[]> {
  return (await wh.sql<ApiTokenRow[]>`select ${columns(wh)} from ${t(wh)} order by name`).map(recordOf);
}

/** Deletes the token: every server refuses it from its next request. */
export async function revokeToken(wh: Warehouse, name: string): Promise<void> {
  const gone = await wh.sql`delete from ${t(wh)} where name = ${name}`;
  if (gone.count === 0) throw new TokenError('unknown_token', `no token ${name.slice(0, 64)} (wfsync tokens list)`);
}

/** The token a request presents, if it is one; its last use noted (to the minute). */
export async function findToken(wh: Warehouse, token: string): Promise<ApiToken | undefined> {
  const [row] = await wh.sql<ApiTokenRow[]>`
    select ${columns(wh)} from ${t(wh)} where token_hash = ${tokenHash(token)}`;
  if (!row) return undefined;
  if (!row.last_used_at || Date.now() - row.last_used_at.getTime() > 60_000)
    await wh.sql`update ${t(wh)} set last_used_at = now()
                 where name = ${row.name} and (last_used_at is null or last_used_at < now() - ${TOUCH_EVERY}::interval)`;
  return recordOf(row);
}

interface ApiTokenRow {
  name: string;
  scopes: TokenScope[];
  companies: string[];
  created_at: Date;
  created_by: string;
  last_used_at: Date | null;
}

const columns = (wh: Warehouse) => wh.sql`name, scopes, companies, created_at, created_by, last_used_at`;

const recordOf = (r: ApiTokenRow): ApiToken => ({
  name: r.name,
  scopes: r.scopes,
  companies: r.companies,
  createdAt: r.created_at,
  createdBy: r.created_by,
  lastUsedAt: r.last_used_at,
});
