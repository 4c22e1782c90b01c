import { createHash, createHmac, pbkdf2Sync, randomBytes } from 'node:crypto';
import type postgres from 'postgres';
import type { Warehouse } from './connection.ts';
import { ident } from './access-policies.ts';
import { analystSchemaOf, grantAnalystViews, hasMaskedViews, revokeAnalystViews } from './masked-views.ts';

/**
 * Which of the operator's Postgres roles read which companies (`wfsync access`), each with or without its
 * personal data. A grant is a row of `access_grants`, which the tables' policies and the analyst schema's masks
 * read, plus SELECT on the analyst schema's views (masked-views.ts); a role reads nothing of the tables
 * themselves.
 */

export type AccessErrorKind =
  | 'invalid'
  | 'unknown_company'
  | 'unknown_role'
  | 'role_exists'
  | 'protected_role'
  | 'not_migrated'
  | 'not_granted'
  | 'not_permitted';

/** A grant or revoke the warehouse refuses, in one line naming the role or company; nothing was changed. */
export class AccessError extends Error {
  override readonly name = 'AccessError';
  constructor(
    readonly kind: AccessErrorKind,
    message: string,
  ) {
    super(message);
  }
}

export interface AccessGrant {
  role: string;
  companies: string[];
  /** The companies of `companies` whose personal data the role reads. */
  personal: string[];
  grantedAt: Date;
}

export interface GrantRequest {
  role: string;
  companies: string[];
  personal: boolean;
  /** Create the role, able to log in with this password. */
  createWithPassword?: string;
}

/** Postgres truncates longer names: a role is refused rather than granted under another name. */
const MAX_IDENTIFIER_BYTES = 63;

export function checkRoleName(role: string): void {
  if (role.length === 0 || Buffer.byteLength(role) > MAX_IDENTIFIER_BYTES || role.includes('\0')) {
    throw new AccessError('invalid', `role "${role}": a role name has 1 to ${MAX_IDENTIFIER_BYTES} bytes`);
  }
}

/**
 * A SCRAM-SHA-256 verifier of the password (RFC 7677, as Postgres stores it), so the password itself is never
 * in the statement, the server's log or pg_stat_statements.
 */
export function scramVerifier(password: string, iterations = 4096): string {
  const salt = randomBytes(16);
  const salted = pbkdf2Sync(password.normalize('NFKC'), salt, iterations, 32, 'sha256');
  const clientKey = createHmac('sha256', salted).update('Client Key').digest();
  const storedKey = createHash('sha256').update(clientKey).digest();
  const serverKey = createHmac('sha256', salted).update('Server Key').digest();
  return `SCRAM-SHA-256$${iterations}:${salt.toString('base64')}$${storedKey.toString('base64')}:${serverKey.toString('base64')}`;
}

/** Grants, revokes and migrations hold one lock, one at a time: migrations re-apply every role's privileges. */
async function lockAccess(sql: postgres.TransactionSql, schema: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtext(${`wfsync-migrate:${schema}`}))`;
}

interface RoleFacts {
  exists: boolean;
  superuser: boolean;
  bypassrls: boolean;
  self: boolean;
  owner: boolean;
}

async function roleFacts(sql: postgres.TransactionSql, schema: string, role: string): Promise<RoleFacts> {
  const [facts] = await sql<RoleFacts[]>`
    select exists (select 1 from pg_roles where rolname = ${role}) as exists,
           coalesce((select rolsuper from pg_roles where rolname = ${role}), false) as superuser,
           coalesce((select rolbypassrls from pg_roles where rolname = ${role}), false) as bypassrls,
           ${role} = current_user::text or ${role} = session_user::text as self,
           ${role} = (select pg_get_userbyid(nspowner)::text from pg_namespace where nspname = ${schema}) as owner`;
  return facts!;
}

/** The sync's own role and the schema's owner keep full access; a superuser or BYPASSRLS role sees every row anyway. */
function refuseProtected(role: string, facts: RoleFacts): void {
  if (facts.self)
    throw new AccessError('protected_role', `role "${role}" is the sync's own role: it keeps full access`);
  if (facts.owner)
    throw new AccessError('protected_role', `role "${role}" owns the warehouse schema: it keeps full access`);
  if (facts.superuser || facts.bypassrls) {
    throw new AccessError(
      'protected_role',
      `role "${role}" is a superuser or has BYPASSRLS: it reads every company's rows whatever it is granted`,
    );
  }
}

async function refuseUnknownCompanies(
  sql: postgres.TransactionSql,
  schema: string,
  companies: string[],
): Promise<void> {
  const known = await sql<
    { key: string }[]
  >`select company_key as key from ${sql(schema)}.companies where company_key = any (${companies}::text[])`;
  const unknown = companies.find((c) => !known.some((k) => k.key === c));
  if (unknown !== undefined)
    throw new AccessError('unknown_company', `company "${unknown}" is not in the warehouse (wfsync companies list)`);
}

/** The analyst schema is made by migrate with the catalog: without it there is nothing to grant. */
async function refuseUnmigrated(sql: postgres.TransactionSql, schema: string): Promise<void> {
  if (await hasMaskedViews(sql, schema)) return;
  throw new AccessError(
    'not_migrated',
    `the warehouse has no schema ${analystSchemaOf(schema)} for analysts yet: run wfsync migrate first`,
  );
}

function permissionRefused(e: unknown, what: string): never {
  if ((e as { code?: string }).code === '42501')
    throw new AccessError('not_permitted', `${what}: the warehouse's role may not (${(e as Error).message})`);
  throw e;
}

/** Records the grant and gives the role SELECT on what it may read; with a password, creates the role first. */
export async function grantAccess(wh: Warehouse, req: GrantRequest): Promise<void> {
  checkRoleName(req.role);
  if (req.companies.length === 0)
    throw new AccessError('invalid', `access grant ${req.role}: name at least one --company`);
  const companies = [...new Set(req.companies)];
  await wh.sql.begin(async (sql) => {
    await lockAccess(sql, wh.schema);
    await refuseUnknownCompanies(sql, wh.schema, companies);
    const facts = await roleFacts(sql, wh.schema, req.role);
    if (req.createWithPassword !== undefined && facts.exists)
      throw new AccessError('role_exists', `role "${req.role}" exists already: grant it without --create`);
    if (req.createWithPassword === undefined && !facts.exists)
      throw new AccessError(
        'unknown_role',
        `role "${req.role}" does not exist: add --create to make it (password on standard input)`,
      );
    refuseProtected(req.role, facts);
    await refuseUnmigrated(sql, wh.schema);
    if (req.createWithPassword !== undefined) {
      const verifier = scramVerifier(req.createWithPassword).replace(/'/g, "''");
      await sql
        .unsafe(`create role ${ident(req.role)} login password '${verifier}'`)
        .catch((e: unknown) => permissionRefused(e, `create role "${req.role}"`));
    }
    await sql`
      insert into ${sql(wh.schema)}.access_grants (role, company_key, personal)
      select ${req.role}, unnest(${companies}::text[]), ${req.personal}
      on conflict (role, company_key) do update set personal = excluded.personal`;
    await grantAnalystViews(sql, wh.schema, req.role).catch((e: unknown) =>
      permissionRefused(e, `grant to "${req.role}"`),
    );
  });
}

/** Forgets the role's grant of these companies (all when none are named); a role left with none reads nothing. */
export async function revokeAccess(wh: Warehouse, role: string, companies: string[] = []): Promise<{ left: string[] }> {
  checkRoleName(role);
  return wh.sql.begin(async (sql) => {
    await lockAccess(sql, wh.schema);
    const held = await sql<{ company: string; personal: boolean }[]>`
      select company_key as company, personal from ${sql(wh.schema)}.access_grants where role = ${role} order by company_key`;
    if (held.length === 0)
      throw new AccessError('not_granted', `role "${role}" has no access granted (wfsync access list)`);
    const missing = companies.find((c) => !held.some((h) => h.company === c));
    if (missing !== undefined)
      throw new AccessError('not_granted', `role "${role}" has no access to company "${missing}"`);
    const revoked = companies.length > 0 ? new Set(companies) : new Set(held.map((h) => h.company));
    await sql`delete from ${sql(wh.schema)}.access_grants where role = ${role} and company_key = any (${[...revoked]}::text[])`;
    const left = held.filter((h) => !revoked.has(h.company));
    const { exists } = await roleFacts(sql, wh.schema, role);
    if (exists) {
      if (left.length === 0)
        await revokeAnalystViews(sql, wh.schema, role).catch((e: unknown) =>
          permissionRefused(e, `revoke from "${role}"`),
        );
    }
    return { left: left.map((h) => h.company) };
  });
}

/** Every role granted access, with its companies and those it reads with personal data. */
export async function listAccess(wh: Warehouse): Promise<AccessGrant[]> {
  return wh.sql<AccessGrant[]>`
    select role, array_agg(company_key order by company_key) as companies,
           coalesce(array_agg(company_key order by company_key) filter (where personal), '{}') as personal,
           min(granted_at) as "grantedAt"
    from ${wh.sql(wh.schema)}.access_grants group by role order by role`;
}
