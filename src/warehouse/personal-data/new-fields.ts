import type { Warehouse } from '../connection.ts';
import { recordEvent } from '../events.ts';
import {
  DEFAULT_POLICY_KEY,
  FIELD_CLASSES,
  NEW_FIELD_MODES,
  type FieldClass,
  type NewFieldMode,
} from '../tables/personal-data.ts';
import { companyKeys, rewriteCompany } from './admin.ts';
import type { PersonalData } from './data.ts';
import {
  fieldsSentTo,
  listNewFieldModes,
  newFieldsOf,
  storeFieldClass,
  storeNewFieldMode,
  streamsThatSent,
} from './field-classes.ts';
import { bumpVersion, knownCompany, lockKey, markApplied, PersonalDataError } from './policy.ts';
import type { RewriteCounts } from './rewrite.ts';
import { listSchemaChanges, type SchemaChangeRow } from '../schema-changes.ts';

/**
 * What `wfsync schema classify` and `wfsync schema new-fields`, and the ops server, do: validate, store under the
 * policy lock (raising the policy version, so a page mapped before is mapped again), rewrite what is stored, put
 * it on the company's timeline, and say which streams to read again for values held until now.
 */

/** A stream of a company to re-sync: a field held until now is stored from its next complete read. */
export interface ResyncDue {
  company: string;
  stream: string;
}

export interface Classified {
  company: string;
  field: string;
  class: FieldClass;
  /** Rows rewritten per company and table (a policy on the field, now under the policies). */
  rewritten: Record<string, RewriteCounts>;
  resync: ResyncDue[];
}

export interface ModeSet {
  company: string;
  mode: NewFieldMode;
  rewritten: Record<string, RewriteCounts>;
  resync: ResyncDue[];
}

function checkClass(cls: unknown): FieldClass {
  if (typeof cls !== 'string' || !(FIELD_CLASSES as readonly string[]).includes(cls))
    throw new PersonalDataError(
      'unknown_class',
      `class: unknown class "${String(cls).slice(0, 40)}" (${FIELD_CLASSES.join(', ')})`,
    );
  return cls as FieldClass;
}

function checkMode(mode: unknown): NewFieldMode {
  if (typeof mode !== 'string' || !(NEW_FIELD_MODES as readonly string[]).includes(mode))
    throw new PersonalDataError(
      'unknown_mode',
      `mode: unknown mode "${String(mode).slice(0, 40)}" (${NEW_FIELD_MODES.join(' or ')})`,
    );
  return mode as NewFieldMode;
}

/** The catalog's field a record's field name carries, if any (own keys only: `constructor` is no field). */
const catalogFieldOf = (pd: PersonalData, name: string) => (Object.hasOwn(pd.names, name) ? pd.names[name] : undefined);

/** A field classify may name: one the service sent (to the company, or to any for `*`), or one of the catalog. */
async function checkField(wh: Warehouse, pd: PersonalData, companyKey: string, field: string, cls: FieldClass) {
  const catalogField = catalogFieldOf(pd, field);
  if (catalogField !== undefined) {
    const kind = pd.kinds[catalogField]!;
    if (cls !== kind)
      throw new PersonalDataError(
        'fixed_class',
        `${field}: a field of the personal-data catalog, of kind ${kind}; it cannot be classified ${cls}`,
      );
    return;
  }
  if ((await streamsThatSent(wh, companyKey, field)).length === 0)
    throw new PersonalDataError(
      'unknown_field',
      `field: "${field.slice(0, 100)}" was never sent${companyKey === DEFAULT_POLICY_KEY ? '' : ` to ${companyKey}`} and is not in the personal-data catalog (wfsync schema lists the fields sent)`,
    );
}

/** The companies a change for `companyKey` reaches: itself, or every company for the default. */
const reached = async (wh: Warehouse, companyKey: string) =>
  companyKey === DEFAULT_POLICY_KEY ? companyKeys(wh) : [companyKey];

/** Stores under the policy lock and raises the version of `companyKey`; answers the new version. */
async function underLock(
  wh: Warehouse,
  companyKey: string,
  store: (tx: Warehouse['sql']) => Promise<void>,
): Promise<number> {
  const [key, company] = lockKey(wh, companyKey);
  return wh.sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(hashtext(${key}), hashtext(${company}))`;
    await store(tx as never);
    return bumpVersion(tx as never, wh.schema, companyKey);
  });
}

/** Whether a company holds a field's values now: under hold, with no class for it and not in the catalog. */
async function holds(wh: Warehouse, pd: PersonalData, companyKey: string, field: string): Promise<boolean> {
  const added = await newFieldsOf(wh, companyKey);
  return added.hold && !added.classes.has(field) && catalogFieldOf(pd, field) === undefined;
}

/**
 * Classifies a field for a company (or `*`, the default). `personal` or `patient` puts it under the policies;
 * a company that held its values gets them from the next complete read of each stream that sent it.
 */
export async function classifyField(
  wh: Warehouse,
  pd: PersonalData,
  companyKey: string,
  field: string,
  classText: unknown,
): Promise<Classified> {
  const cls = checkClass(classText);
  await knownCompany(wh, companyKey);
  await checkField(wh, pd, companyKey, field, cls);
  const companies = await reached(wh, companyKey);
  const held = new Set<string>();
  for (const c of companies) if (await holds(wh, pd, c, field)) held.add(c);
  const version = await underLock(wh, companyKey, (tx) =>
    storeFieldClass(tx, wh.schema, { company: companyKey, field, class: cls }),
  );
  const rewritten: Record<string, RewriteCounts> = {};
  const scope = companyKey === DEFAULT_POLICY_KEY ? 'default' : 'company';
  for (const c of companies) {
    rewritten[c] = await rewriteCompany(wh, pd, c);
    await recordEvent(wh, { companyKey: c, event: 'field_classified', detail: { field, class: cls, scope } });
  }
  await markApplied(wh, companyKey, version);
  const resync = (await streamsThatSent(wh, companyKey, field)).filter((s) => held.has(s.company));
  return { company: companyKey, field, class: cls, rewritten, resync };
}

/**
 * Sets what a company (or `*`) stores of its unclassified fields. `hold` removes the values already stored;
 * `keep` after `hold` asks for a re-sync of each stream that sent an unclassified field, which brings them back.
 */
export async function setNewFieldMode(
  wh: Warehouse,
  pd: PersonalData,
  companyKey: string,
  modeText: unknown,
): Promise<ModeSet> {
  const mode = checkMode(modeText);
  await knownCompany(wh, companyKey);
  const companies = await reached(wh, companyKey);
  const own = await listNewFieldModes(wh);
  // A company with a mode of its own does not follow the default's.
  const followers = companyKey === DEFAULT_POLICY_KEY ? companies.filter((c) => !own.has(c)) : companies;
  const heldBefore = new Map<string, boolean>();
  for (const c of followers) heldBefore.set(c, (await newFieldsOf(wh, c)).hold);
  const version = await underLock(wh, companyKey, (tx) => storeNewFieldMode(tx, wh.schema, companyKey, mode));
  const rewritten: Record<string, RewriteCounts> = {};
  const resync: ResyncDue[] = [];
  const scope = companyKey === DEFAULT_POLICY_KEY ? 'default' : 'company';
  for (const c of followers) {
    rewritten[c] = await rewriteCompany(wh, pd, c);
    if (mode === 'keep' && heldBefore.get(c)) resync.push(...(await unclassifiedStreams(wh, pd, c)));
    await recordEvent(wh, {
      companyKey: c,
      event: 'new_fields_mode_changed',
      detail: { mode, scope, rewritten: rewritten[c] },
    });
  }
  await markApplied(wh, companyKey, version);
  return { company: companyKey, mode, rewritten, resync };
}

/** The streams that sent a company a field no class names: what `hold` kept from being stored. */
async function unclassifiedStreams(wh: Warehouse, pd: PersonalData, companyKey: string): Promise<ResyncDue[]> {
  const { classes } = await newFieldsOf(wh, companyKey);
  const streams = new Set(
    (await fieldsSentTo(wh, companyKey))
      .filter((f) => !classes.has(f.field) && catalogFieldOf(pd, f.field) === undefined)
      .map((f) => f.stream),
  );
  return [...streams].map((stream) => ({ company: companyKey, stream }));
}

/** A field the service added, as `wfsync schema` lists it: with its class, and whether its values are held. */
export interface ListedField extends SchemaChangeRow {
  /** The company's own class, else the default's, else the catalog's kind; `unclassified` when none says. */
  class: FieldClass | 'unclassified';
  /** Whether the company holds its values (under hold, unclassified). */
  held: boolean;
}

/** Every field recorded in schema_changes (of one company, or all), the latest first, with its class. */
export async function listNewFields(wh: Warehouse, pd: PersonalData, companyKey?: string): Promise<ListedField[]> {
  const rows = await listSchemaChanges(wh, { companyKey });
  const byCompany = new Map<string, Awaited<ReturnType<typeof newFieldsOf>>>();
  for (const c of new Set(rows.map((r) => r.company_key))) byCompany.set(c, await newFieldsOf(wh, c));
  return rows.map((r) => {
    const added = byCompany.get(r.company_key)!;
    const catalogField = catalogFieldOf(pd, r.field_path);
    const cls = added.classes.get(r.field_path) ?? (catalogField ? pd.kinds[catalogField] : undefined);
    return { ...r, class: cls ?? 'unclassified', held: added.hold && cls === undefined };
  });
}

/** Each company's mode for new fields (its own, else the default's), and the default's under `*`. */
export async function newFieldModes(wh: Warehouse): Promise<Record<string, NewFieldMode>> {
  const own = await listNewFieldModes(wh);
  const fallback = own.get(DEFAULT_POLICY_KEY) ?? 'keep';
  const out: Record<string, NewFieldMode> = { [DEFAULT_POLICY_KEY]: fallback };
  for (const c of await companyKeys(wh)) out[c] = own.get(c) ?? fallback;
  return out;
}
