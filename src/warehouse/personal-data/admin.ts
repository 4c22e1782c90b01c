import type { Warehouse } from '../connection.ts';
import { recordEvent } from '../events.ts';
import type { PersonalKind } from './catalog.ts';
import type { PersonalData } from './data.ts';
import { personalHmac, personHash, HASHED } from './hmac.ts';
import {
  bumpVersion,
  DEFAULT_POLICY_KEY,
  knownCompany,
  listPolicies,
  lockKey,
  markApplied,
  pendingRewrites,
  PERSONAL_DATA_ACTIONS,
  PersonalDataError,
  storePolicy,
  type PersonalDataAction,
  type PolicyListing,
} from './policy.ts';
import { erasePerson, rewriteUnderPolicy, type PersonIds, type RewriteCounts } from './rewrite.ts';
import { rewriteHeld } from './rewrite-held.ts';
import { fieldsSentTo, newFieldsOf } from './field-classes.ts';
import type { FieldClass } from '../tables/personal-data.ts';

/**
 * What `wfsync personal-data`, `wfsync erase`, the ops server and housekeeping do: validate, store, rewrite what
 * is stored, and put it on the company's timeline.
 */

export type { PersonalData };

/** The fields the service added to a company (or to any, for `*`): those seen, and their classes. */
export interface AddedFields {
  readonly classes: ReadonlyMap<string, FieldClass>;
  readonly seen: ReadonlySet<string>;
}

const NONE: AddedFields = { classes: new Map(), seen: new Set() };

export async function addedFields(wh: Warehouse, companyKey: string): Promise<AddedFields> {
  const [{ classes }, seen] = await Promise.all([
    newFieldsOf(wh, companyKey),
    companyKey === DEFAULT_POLICY_KEY
      ? wh.sql<{ field: string }[]>`select distinct field_path as field from ${wh.sql(wh.schema)}.schema_changes`
      : fieldsSentTo(wh, companyKey),
  ]);
  return { classes, seen: new Set(seen.map((r) => r.field)) };
}

/** A field the policies govern: the catalog's, or one the service added that is classified personal or patient. */
function governed(pd: PersonalData, added: AddedFields, field: string): boolean {
  if (Object.values(pd.names).includes(field)) return true;
  const cls = added.classes.get(field);
  return cls === 'personal' || cls === 'patient';
}

/** A field can be hashed when every column it lands in holds text (a date or a JSON answer cannot). */
export function hashable(pd: PersonalData, field: string): boolean {
  return pd.catalog.filter((c) => c.field === field).every((c) => c.sqlType === 'text');
}

function unknownField(pd: PersonalData, added: AddedFields, field: string): PersonalDataError {
  if (added.seen.has(field)) {
    const cls = added.classes.get(field);
    return new PersonalDataError(
      'not_classified',
      `${field}: ${cls ? 'classified not-personal' : 'not classified'}; classify it personal or patient first (wfsync schema classify)`,
    );
  }
  const known = [...new Set(Object.values(pd.names))].sort().join(', ');
  return new PersonalDataError('unknown_field', `unknown personal field "${field}" (known: ${known})`);
}

/** `FIELD=ACTION` pairs checked against the catalog and the classified fields; the first bad one is refused. */
export function parsePolicyChanges(
  pd: PersonalData,
  pairs: Readonly<Record<string, unknown>>,
  added: AddedFields = NONE,
): Map<string, PersonalDataAction> {
  const out = new Map<string, PersonalDataAction>();
  const entries = Object.entries(pairs);
  if (entries.length === 0) throw new PersonalDataError('invalid', 'no FIELD=keep|hash|block given');
  for (const [field, action] of entries) {
    if (!governed(pd, added, field)) throw unknownField(pd, added, field);
    if (typeof action !== 'string' || !(PERSONAL_DATA_ACTIONS as readonly string[]).includes(action)) {
      throw new PersonalDataError(
        'unknown_action',
        `${field}: unknown action "${String(action)}" (keep, hash or block)`,
      );
    }
    if (action === 'hash' && !hashable(pd, field))
      throw new PersonalDataError('not_hashable', `${field}: cannot be hashed (it is not stored as text); use block`);
    out.set(field, action as PersonalDataAction);
  }
  return out;
}

export interface PolicySet {
  company: string;
  /** Rows rewritten, by company and table. */
  rewritten: Record<string, RewriteCounts>;
}

/** Sets fields' actions for a company (or `*`, the default) and rewrites the stored rows before returning. */
export async function setPersonalDataPolicy(
  wh: Warehouse,
  pd: PersonalData,
  companyKey: string,
  pairs: Readonly<Record<string, unknown>>,
  onCounts?: (company: string, counts: RewriteCounts) => void,
): Promise<PolicySet> {
  await knownCompany(wh, companyKey);
  const changes = parsePolicyChanges(pd, pairs, await addedFields(wh, companyKey));
  const version = await storePolicy(wh, companyKey, changes);
  const companies = companyKey === DEFAULT_POLICY_KEY ? await companyKeys(wh) : [companyKey];
  const rewritten: Record<string, RewriteCounts> = {};
  const detail = {
    scope: companyKey === DEFAULT_POLICY_KEY ? 'default' : 'company',
    fields: Object.fromEntries(changes),
  };
  for (const c of companies) {
    rewritten[c] = await rewriteCompany(wh, pd, c);
    onCounts?.(c, rewritten[c]);
    await recordEvent(wh, {
      companyKey: c,
      event: 'personal_data_policy_changed',
      detail: { ...detail, rewritten: rewritten[c] },
    });
  }
  await markApplied(wh, companyKey, version);
  return { company: companyKey, rewritten };
}

export async function companyKeys(wh: Warehouse): Promise<string[]> {
  const rows = await wh.sql<
    { company_key: string }[]
  >`select company_key from ${wh.sql(wh.schema)}.companies order by company_key`;
  return rows.map((r) => r.company_key);
}

/**
 * Rewrites a company's rows under its policy (and, under hold, without the values of its unclassified fields), and
 * marks its current version applied.
 */
export async function rewriteCompany(wh: Warehouse, pd: PersonalData, companyKey: string): Promise<RewriteCounts> {
  const [row] = await wh.sql<{ version: number }[]>`
    select version from ${wh.sql(wh.schema)}.personal_data_versions where company_key = ${companyKey}`;
  const counts = await rewriteStored(wh, pd, companyKey);
  if (row) await markApplied(wh, companyKey, Number(row.version));
  return counts;
}

/** What is stored of a company, rewritten under its policy and its mode for new fields. */
async function rewriteStored(wh: Warehouse, pd: PersonalData, companyKey: string): Promise<RewriteCounts> {
  const counts = await rewriteUnderPolicy(wh, pd, companyKey);
  if (!(await newFieldsOf(wh, companyKey)).hold) return counts;
  const held = await rewriteHeld(wh, pd, companyKey);
  for (const [table, n] of Object.entries(held)) counts[table] = (counts[table] ?? 0) + n;
  return counts;
}

/**
 * Finishes rewrites that were interrupted (a `set` or an erasure stopped before its end): the default's for every
 * company, then each company's.
 */
export async function applyPendingRewrites(wh: Warehouse, pd: PersonalData): Promise<Record<string, RewriteCounts>> {
  const out: Record<string, RewriteCounts> = {};
  for (const p of await pendingRewrites(wh)) {
    const companies = p.companyKey === DEFAULT_POLICY_KEY ? await companyKeys(wh) : [p.companyKey];
    for (const c of companies) out[c] = await rewriteStored(wh, pd, c);
    await markApplied(wh, p.companyKey, p.version);
  }
  return out;
}

/** Who an erasure names: the service's numeric id or the employee number. */
export type PersonRef = { serviceId: number } | { employeeNumber: string };

export interface Erasure {
  id: number;
  company: string;
  counts: RewriteCounts;
}

/**
 * Erases a person: every personal field blocked everywhere, the person on the suppression list (so later syncs
 * keep them blocked), an `erasures` row and an `individual_erased` event, neither holding personal data.
 */
export async function erase(
  wh: Warehouse,
  pd: PersonalData,
  companyKey: string,
  ref: PersonRef,
  requestedBy: string,
): Promise<Erasure> {
  await knownCompany(wh, companyKey);
  if (companyKey === DEFAULT_POLICY_KEY) throw new PersonalDataError('unknown_company', 'erase needs a company');
  const person = await findPerson(wh, companyKey, ref, personalHmac(wh.personalDataKey()).of);
  if (!person) {
    const which = 'serviceId' in ref ? `service id ${ref.serviceId}` : 'that employee number';
    throw new PersonalDataError('unknown_person', `company "${companyKey}" has no individual with ${which}`);
  }
  const clearNumbers = [
    ...('employeeNumber' in ref ? [ref.employeeNumber] : []),
    ...person.employeeNumbers.filter((n) => !HASHED.test(n)),
  ];
  return erasePeople(wh, pd, companyKey, { ids: person, clearNumbers, requestedBy, cause: 'request' });
}

/** Whom an erasure names (with their employee numbers in clear, to suppress), who asked for it, and why. */
interface ErasureOrder {
  ids: PersonIds;
  clearNumbers: readonly string[];
  requestedBy: string;
  cause: 'request' | 'retention';
}

/** Erases the people of `ids` in one pass: one erasures row, one event, one rewrite of every table. */
async function erasePeople(
  wh: Warehouse,
  pd: PersonalData,
  companyKey: string,
  { ids, clearNumbers, requestedBy, cause }: ErasureOrder,
): Promise<Erasure> {
  const hmac = personalHmac(wh.personalDataKey());
  const hashes = [
    ...ids.serviceIds.map((id) => personHash(hmac, 'service_id', id)),
    ...[...new Set(clearNumbers)].map((n) => personHash(hmac, 'employee_number', n)),
  ];
  const [erasureRow] = await wh.sql<{ id: number }[]>`
    insert into ${wh.sql(wh.schema)}.erasures (company_key, requested_by, cause, counts) values (${companyKey}, ${requestedBy}, ${cause}, '{}'::jsonb) returning id`;
  const erasureId = Number(erasureRow!.id);
  const version = await suppress(wh, companyKey, hashes, erasureId);
  const counts = await erasePerson(wh, pd, companyKey, ids);
  await markApplied(wh, companyKey, version);
  await wh.sql`update ${wh.sql(wh.schema)}.erasures set counts = ${wh.sql.json(counts)} where id = ${erasureId}`;
  await recordEvent(wh, {
    companyKey,
    event: 'individual_erased',
    detail: { erasure: erasureId, cause, people: ids.serviceIds.length, rewritten: counts },
  });
  return { id: erasureId, company: companyKey, counts };
}

/**
 * Retention: erases every individual of the company deleted at the service, or `Former`, for longer than `days`
 * (since the first version that was Former, after the last that was not), who is not erased yet.
 */
export async function eraseFormerIndividuals(
  wh: Warehouse,
  pd: PersonalData,
  companyKey: string,
  days: number,
): Promise<{ people: number; erasure?: Erasure }> {
  const s = wh.sql(wh.schema);
  const rows = await wh.sql<{ service_id: number; employee_number: string | null }[]>`
    select i.service_id, i.employee_number from ${s}.individuals i
    where i.company_key = ${companyKey}
      and (i._deleted_at < now() - make_interval(secs => ${days * 86_400})
        or (i.status = 'Former' and (
          select coalesce(max(h.valid_to) filter (where h.status is distinct from 'Former'), min(h.valid_from))
          from ${s}.individuals_history h where h.company_key = ${companyKey} and h.service_id = i.service_id
        ) < now() - make_interval(secs => ${days * 86_400})))`;
  if (rows.length === 0) return { people: 0 };
  const hmac = personalHmac(wh.personalDataKey());
  const suppressed = new Set(
    (
      await wh.sql<
        { person_hash: string }[]
      >`select person_hash from ${s}.personal_data_suppressions where company_key = ${companyKey}`
    ).map((r) => r.person_hash),
  );
  const due = rows.filter((r) => !suppressed.has(personHash(hmac, 'service_id', Number(r.service_id))));
  if (due.length === 0) return { people: 0 };
  const numbers = due.flatMap((r) => (r.employee_number ? [r.employee_number] : []));
  const ids: PersonIds = { serviceIds: due.map((r) => Number(r.service_id)), employeeNumbers: numbers };
  const erasure = await erasePeople(wh, pd, companyKey, {
    ids,
    clearNumbers: numbers.filter((n) => !HASHED.test(n)),
    requestedBy: 'retention',
    cause: 'retention',
  });
  return { people: due.length, erasure };
}

/** Puts hashes on the suppression list and raises the version, under the policy lock (as a policy change). */
async function suppress(
  wh: Warehouse,
  companyKey: string,
  hashes: readonly string[],
  erasureId: number,
): Promise<number> {
  const [key, company] = lockKey(wh, companyKey);
  return wh.sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(hashtext(${key}), hashtext(${company}))`;
    await tx`insert into ${tx(wh.schema)}.personal_data_suppressions (company_key, person_hash, erasure_id)
      select ${companyKey}, h, ${erasureId} from unnest(${hashes}::text[]) h on conflict do nothing`;
    return bumpVersion(tx as never, wh.schema, companyKey);
  });
}

/**
 * Every id the warehouse holds for the person: the service id and each employee number they had, as stored
 * (clear, or hashed when EmployeeNumber is hashed), from their rows and every version. Undefined: unknown.
 */
async function findPerson(
  wh: Warehouse,
  companyKey: string,
  ref: PersonRef,
  hash: (v: string) => string,
): Promise<PersonIds | undefined> {
  const s = wh.sql(wh.schema);
  const rows =
    'serviceId' in ref
      ? await wh.sql<{ service_id: number; employee_number: string | null }[]>`
          select service_id, employee_number from ${s}.individuals where company_key = ${companyKey} and service_id = ${ref.serviceId}
          union select service_id, employee_number from ${s}.individuals_history where company_key = ${companyKey} and service_id = ${ref.serviceId}`
      : await wh.sql<{ service_id: number; employee_number: string | null }[]>`
          select service_id, employee_number from ${s}.individuals where company_key = ${companyKey} and employee_number in (${ref.employeeNumber}, ${hash(ref.employeeNumber)})
          union select service_id, employee_number from ${s}.individuals_history where company_key = ${companyKey} and employee_number in (${ref.employeeNumber}, ${hash(ref.employeeNumber)})`;
  if (rows.length === 0) return undefined;
  const numbers = rows.flatMap((r) => (r.employee_number ? [r.employee_number] : []));
  if ('employeeNumber' in ref) numbers.push(ref.employeeNumber, hash(ref.employeeNumber));
  return { serviceIds: [...new Set(rows.map((r) => Number(r.service_id)))], employeeNumbers: [...new Set(numbers)] };
}

/** A listing of policies with the kind of each field they govern. */
export interface PersonalDataListing extends PolicyListing {
  /** Every field the policies govern for it, by name: the catalog's, and the fields classified personal or patient. */
  kinds: Record<string, PersonalKind>;
}

/** The default policy and every company's (or one company's), with each governed field's kind. */
export async function listPersonalData(
  wh: Warehouse,
  pd: PersonalData,
  companyKey?: string,
): Promise<PersonalDataListing[]> {
  const listed = await listPolicies(wh, companyKey);
  const catalog = Object.fromEntries(Object.values(pd.names).map((f) => [f, pd.kinds[f]!]));
  const out: PersonalDataListing[] = [];
  for (const l of listed) {
    const { classes } = await newFieldsOf(wh, l.company);
    const kinds: Record<string, PersonalKind> = { ...catalog };
    for (const [field, cls] of classes) if (cls !== 'not-personal') kinds[field] = cls;
    out.push({ ...l, kinds: Object.fromEntries(Object.entries(kinds).sort(([a], [b]) => (a < b ? -1 : 1))) });
  }
  return out;
}
