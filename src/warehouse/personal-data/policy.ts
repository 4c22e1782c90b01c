import type { Warehouse } from '../connection.ts';
import { findCompany } from '../company-records.ts';
import {
  DEFAULT_POLICY_KEY,
  PERSONAL_DATA_ACTIONS,
  type FieldClass,
  type PersonalDataAction,
} from '../tables/personal-data.ts';
import type { PersonalKind } from './catalog.ts';
import { newFieldsOf, type NewFields } from './field-classes.ts';
import { personalHmac, type PersonalHmac } from './hmac.ts';

export { DEFAULT_POLICY_KEY, PERSONAL_DATA_ACTIONS, type PersonalDataAction };

export type PersonalDataErrorKind =
  | 'unknown_company'
  | 'unknown_field'
  | 'unknown_action'
  | 'not_hashable'
  | 'unknown_person'
  | 'not_classified'
  | 'unknown_class'
  | 'fixed_class'
  | 'unknown_mode'
  | 'invalid';

/** A personal-data request refused, in one line naming the field, action, company or person. */
export class PersonalDataError extends Error {
  override readonly name = 'PersonalDataError';
  constructor(
    readonly kind: PersonalDataErrorKind,
    message: string,
  ) {
    super(message);
  }
}

/**
 * What a page is written under: the fields not kept, the people erased (keyed hashes of their ids), and what is
 * stored of the fields the service added.
 */
export interface CompanyPolicy {
  readonly companyKey: string;
  /** `<company version>:<default version>`: what the page's transaction checks is still current. */
  readonly version: string;
  /** Fields of the catalog, and fields classified personal or patient, that are hashed or blocked. */
  readonly actions: ReadonlyMap<string, 'hash' | 'block'>;
  readonly suppressed: ReadonlySet<string>;
  /** Fields the service added, by path, with their class (the company's own over the default's). */
  readonly classes: ReadonlyMap<string, FieldClass>;
  /** Whether the values of fields no column maps and no class names are held (not stored). */
  readonly hold: boolean;
  /** Made only when a field is hashed, someone is erased, or new fields are held. */
  readonly hmac: PersonalHmac | undefined;
}

/** The kind of a field classified personal or patient; undefined for one not personal or not classified. */
export function classifiedKind(policy: CompanyPolicy, path: string): PersonalKind | undefined {
  const c = policy.classes.get(path);
  return c === 'personal' || c === 'patient' ? c : undefined;
}

const t = (wh: Warehouse, table: string) => wh.sql`${wh.sql(wh.schema)}.${wh.sql(table)}`;

/** The version pair of a company's policy: one small read per page. */
export async function policyVersion(wh: Warehouse, companyKey: string): Promise<string> {
  const rows = await wh.sql<{ company_key: string; version: number }[]>`
    select company_key, version from ${t(wh, 'personal_data_versions')} where company_key in (${companyKey}, ${DEFAULT_POLICY_KEY})`;
  const of = (k: string) => Number(rows.find((r) => r.company_key === k)?.version ?? 0);
  return `${of(companyKey)}:${of(DEFAULT_POLICY_KEY)}`;
}

/** Policies by warehouse client and company, kept while their version is the stored one. */
const cache = new WeakMap<object, Map<string, CompanyPolicy>>();

/**
 * The policy a page of `companyKey` is written under now. `cached`: the one last read, without reading its version,
 * for a caller whose transaction checks the version itself (a page write), and forgets it when refused.
 */
export async function currentPolicy(
  wh: Warehouse,
  companyKey: string,
  o: { cached?: boolean } = {},
): Promise<CompanyPolicy> {
  const hit = o.cached ? cache.get(wh.sql)?.get(companyKey) : undefined;
  if (hit) return hit;
  const version = await policyVersion(wh, companyKey);
  let byCompany = cache.get(wh.sql);
  if (!byCompany) cache.set(wh.sql, (byCompany = new Map()));
  const cached = byCompany.get(companyKey);
  if (cached?.version === version) return cached;
  const policy = await readPolicy(wh, companyKey, version);
  byCompany.set(companyKey, policy);
  return policy;
}

/** Drops the policy kept for a company: a page was refused because its version is no longer the stored one. */
export function forgetPolicy(wh: Warehouse, companyKey: string): void {
  cache.get(wh.sql)?.delete(companyKey);
}

async function readPolicy(wh: Warehouse, companyKey: string, version: string): Promise<CompanyPolicy> {
  const [governed, suppressed] = await Promise.all([
    governedActions(wh, companyKey),
    wh.sql<
      { person_hash: string }[]
    >`select person_hash from ${t(wh, 'personal_data_suppressions')} where company_key = ${companyKey}`,
  ]);
  const { actions, added } = governed;
  const acts = actions.size > 0 || suppressed.length > 0 || added.hold;
  return {
    companyKey,
    version,
    actions,
    suppressed: new Set(suppressed.map((r) => r.person_hash)),
    classes: added.classes,
    hold: added.hold,
    hmac: acts ? personalHmac(wh.personalDataKey()) : undefined,
  };
}

/**
 * The fields a company's policy hashes or blocks, and what it stores of the fields the service added. A field
 * classified not personal is out of the policies, whatever they say of it.
 */
export async function governedActions(
  wh: Warehouse,
  companyKey: string,
): Promise<{ actions: Map<string, 'hash' | 'block'>; added: NewFields }> {
  const [fields, added] = await Promise.all([effectiveActions(wh, companyKey), newFieldsOf(wh, companyKey)]);
  const actions = new Map<string, 'hash' | 'block'>();
  for (const [field, action] of fields)
    if (action !== 'keep' && added.classes.get(field) !== 'not-personal') actions.set(field, action);
  return { actions, added };
}

/** Each field's action for a company: its own policy, else the default's. */
export async function effectiveActions(wh: Warehouse, companyKey: string): Promise<Map<string, PersonalDataAction>> {
  const rows = await wh.sql<{ company_key: string; field: string; action: PersonalDataAction }[]>`
    select company_key, field, action from ${t(wh, 'personal_data_policies')} where company_key in (${companyKey}, ${DEFAULT_POLICY_KEY})
    order by company_key = ${DEFAULT_POLICY_KEY} desc`;
  return new Map(rows.map((r) => [r.field, r.action]));
}

export interface PolicyListing {
  /** The company, or `*` for the default. */
  company: string;
  /** Fields set for it (a field not listed falls back to the default, then to keep). */
  fields: Record<string, PersonalDataAction>;
  /** Each field's action as applied to this company's rows (the default's included). */
  effective?: Record<string, PersonalDataAction>;
  /** A rewrite of stored rows not finished (interrupted): `wfsync personal-data apply` finishes it. */
  rewritePending: boolean;
}

/** The default policy and every company's (or one company's), as stored. */
export async function listPolicies(wh: Warehouse, companyKey?: string): Promise<PolicyListing[]> {
  if (companyKey !== undefined) await knownCompany(wh, companyKey);
  const rows = await wh.sql<{ company_key: string; field: string; action: PersonalDataAction }[]>`
    select company_key, field, action from ${t(wh, 'personal_data_policies')} order by company_key, field`;
  const versions = await wh.sql<{ company_key: string; pending: boolean }[]>`
    select company_key, applied_version < version as pending from ${t(wh, 'personal_data_versions')}`;
  const companies = await wh.sql<
    { company_key: string }[]
  >`select company_key from ${t(wh, 'companies')} order by company_key`;
  const keys =
    companyKey !== undefined
      ? [DEFAULT_POLICY_KEY, companyKey]
      : [DEFAULT_POLICY_KEY, ...companies.map((c) => c.company_key)];
  const fieldsOf = (k: string) =>
    Object.fromEntries(rows.filter((r) => r.company_key === k).map((r) => [r.field, r.action]));
  return keys.map((k) => ({
    company: k,
    fields: fieldsOf(k),
    ...(k === DEFAULT_POLICY_KEY ? {} : { effective: { ...fieldsOf(DEFAULT_POLICY_KEY), ...fieldsOf(k) } }),
    rewritePending: versions.some((v) => v.company_key === k && v.pending),
  }));
}

export async function knownCompany(wh: Warehouse, companyKey: string): Promise<void> {
  if (companyKey === DEFAULT_POLICY_KEY) return;
  if (!(await findCompany(wh, companyKey)))
    throw new PersonalDataError('unknown_company', `unknown company "${companyKey}"`);
}

/** Advisory-lock key of a company's (or the default's) policy: pages hold it shared while they commit. */
export const lockKey = (wh: Warehouse, companyKey: string) => [`"${wh.schema}".personal_data`, companyKey] as const;

/**
 * Stores a policy change and raises the version, holding the policy lock exclusively: a page being written now
 * commits first (and its rows are then rewritten), and any page after it is checked against the new version.
 */
export async function storePolicy(
  wh: Warehouse,
  companyKey: string,
  changes: ReadonlyMap<string, PersonalDataAction>,
): Promise<number> {
  const [key, company] = lockKey(wh, companyKey);
  return wh.sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(hashtext(${key}), hashtext(${company}))`;
    for (const [field, action] of changes) {
      await tx`insert into ${tx(wh.schema)}.personal_data_policies (company_key, field, action) values (${companyKey}, ${field}, ${action})
        on conflict (company_key, field) do update set action = excluded.action, changed_at = excluded.changed_at`;
    }
    return bumpVersion(tx as never, wh.schema, companyKey);
  });
}

/** Raises a company's version (in the caller's transaction, which holds its policy lock); returns it. */
export async function bumpVersion(tx: Warehouse['sql'], schema: string, companyKey: string): Promise<number> {
  const [row] = await tx<{ version: number }[]>`
    insert into ${tx(schema)}.personal_data_versions (company_key, version) values (${companyKey}, 1)
    on conflict (company_key) do update set version = personal_data_versions.version + 1, changed_at = excluded.changed_at
    returning version`;
  return Number(row!.version);
}

/** Records that the stored rows of a company were rewritten up to `version`. */
export async function markApplied(wh: Warehouse, companyKey: string, version: number): Promise<void> {
  await wh.sql`update ${t(wh, 'personal_data_versions')} set applied_version = greatest(applied_version, ${version}) where company_key = ${companyKey}`;
}

/** Companies whose rewrite did not finish, and the version to finish it at. */
export async function pendingRewrites(wh: Warehouse): Promise<{ companyKey: string; version: number }[]> {
  const rows = await wh.sql<{ company_key: string; version: number }[]>`
    select company_key, version from ${t(wh, 'personal_data_versions')} where applied_version < version order by company_key`;
  return rows.map((r) => ({ companyKey: r.company_key, version: Number(r.version) }));
}
