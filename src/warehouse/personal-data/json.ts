import type { PersonalKind } from './catalog.ts';
import type { PersonalHmac } from './hmac.ts';
import { personHash } from './hmac.ts';
import type { CompanyPolicy } from './policy.ts';

/**
 * JSON under a policy (`_extra`, rejects' raw payloads): the catalog's fields by name at any depth, as the SQL of
 * a rewrite does it (`personal_json`, migrations 0013 and 0022), and the fields classified personal or patient by
 * their path (`personal_fields`). Each answers the value itself when nothing changes.
 */

/** The names the catalog's fields go by in records, and each field's kind. */
export interface JsonCatalog {
  readonly names: Readonly<Record<string, string>>;
  readonly kinds: Readonly<Record<string, PersonalKind>>;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * A value hashed whole: every string, number and flag in it replaced by its HMAC (a number or flag by that of its
 * JSON text), so an object field (IncidentAddress) keeps its shape and hides each part.
 */
export function hashLeaves(value: unknown, hmac: PersonalHmac): unknown {
  if (value === null || value === undefined) return value;
  if (typeof value === 'string') return hmac.of(value);
  if (Array.isArray(value)) return value.map((v) => hashLeaves(v, hmac));
  if (isObject(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, hashLeaves(v, hmac)]));
  return hmac.of(String(value));
}

const erasedMemo = new WeakMap<CompanyPolicy, Map<string, boolean>>();

/** Whether a person's id is on the policy's suppression list (one keyed hash per id, remembered per policy). */
export function erased(policy: CompanyPolicy, kind: 'service_id' | 'employee_number', value: unknown): boolean {
  if (value === null || value === undefined || value === '' || policy.suppressed.size === 0) return false;
  let memo = erasedMemo.get(policy);
  if (!memo) erasedMemo.set(policy, (memo = new Map()));
  const k = `${kind}:${String(value)}`;
  let hit = memo.get(k);
  if (hit === undefined) memo.set(k, (hit = policy.suppressed.has(personHash(policy.hmac!, kind, String(value)))));
  return hit;
}

/**
 * The catalog's fields in a JSON value, found by name at any depth: hashed or dropped per the policy, and every
 * employee's field of an object naming an erased person dropped (a patient's field stays: no erasure of an
 * employee reaches it).
 */
export function scrubJson(value: unknown, policy: CompanyPolicy, catalog: JsonCatalog, blockAll: boolean): unknown {
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    value.forEach((v, i) => {
      const s = scrubJson(v, policy, catalog, blockAll);
      if (s !== v) (out ??= [...value])[i] = s;
    });
    return out ?? value;
  }
  if (!isObject(value)) return value;
  const block =
    blockAll ||
    erased(policy, 'service_id', value.ServiceId) ||
    erased(policy, 'employee_number', value.EmployeeNumber);
  let out: Record<string, unknown> | undefined;
  for (const k in value) {
    const v = value[k];
    const field = Object.hasOwn(catalog.names, k) ? catalog.names[k] : undefined;
    const action = field
      ? block && catalog.kinds[field] !== 'patient'
        ? 'block'
        : policy.actions.get(field)
      : undefined;
    if (action === 'block') {
      out ??= { ...value };
      delete out[k];
    } else if (action === 'hash' && v !== null && v !== undefined) {
      (out ??= { ...value })[k] = hashLeaves(v, policy.hmac!);
    } else if (typeof v === 'object' && v !== null) {
      const s = scrubJson(v, policy, catalog, block);
      if (s !== v) (out ??= { ...value })[k] = s;
    }
  }
  return out ?? value;
}

/** The classified fields a policy acts on, by path, and the paths of the objects that lead to one. */
interface FieldsPlan {
  readonly acted: ReadonlyMap<string, 'hash' | 'block'>;
  /** Fields classified personal: blocked on a row naming an erased person. */
  readonly erasable: ReadonlySet<string>;
  readonly within: ReadonlySet<string>;
}

const fieldsPlans = new WeakMap<CompanyPolicy, FieldsPlan>();

function fieldsPlan(policy: CompanyPolicy): FieldsPlan {
  let plan = fieldsPlans.get(policy);
  if (plan) return plan;
  const acted = new Map<string, 'hash' | 'block'>();
  const erasable = new Set<string>();
  for (const [path, cls] of policy.classes) {
    if (cls === 'not-personal') continue;
    const action = policy.actions.get(path);
    if (action) acted.set(path, action);
    if (cls === 'personal') erasable.add(path);
  }
  const within = new Set<string>();
  for (const path of [...acted.keys(), ...erasable]) {
    const parts = path.split('.');
    for (let i = 1; i < parts.length; i++) within.add(parts.slice(0, i).join('.'));
  }
  plan = { acted, erasable, within };
  fieldsPlans.set(policy, plan);
  return plan;
}

/** Whether the policy acts on any classified field (by its action, or by an erasure on an erased person's row). */
export function actsOnFields(policy: CompanyPolicy): boolean {
  const plan = fieldsPlan(policy);
  return plan.acted.size > 0 || (policy.suppressed.size > 0 && plan.erasable.size > 0);
}

/**
 * The classified fields of a JSON value, found by path (`prefix` names where the value sits: '' for a record or
 * its `_extra`, `Answers.` for a list element's `_extra`): hashed or dropped per the policy, and on a row naming
 * an erased person (`erasedRow`) those classified personal dropped.
 */
export function scrubFields(value: unknown, policy: CompanyPolicy, prefix: string, erasedRow: boolean): unknown {
  if (!isObject(value)) return value;
  const plan = fieldsPlan(policy);
  let out: Record<string, unknown> | undefined;
  for (const k in value) {
    const path = prefix + k;
    const v = value[k];
    const action = erasedRow && plan.erasable.has(path) ? 'block' : plan.acted.get(path);
    if (action === 'block') {
      out ??= { ...value };
      delete out[k];
    } else if (action === 'hash') {
      (out ??= { ...value })[k] = hashLeaves(v, policy.hmac!);
    } else if (plan.within.has(path)) {
      const s = scrubFields(v, policy, `${path}.`, erasedRow);
      if (s !== v) (out ??= { ...value })[k] = s;
    }
  }
  return out ?? value;
}
