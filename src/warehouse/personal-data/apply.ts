import type { Warehouse } from '../connection.ts';
import type { Pipeline } from '../pipeline.ts';
import type { Row } from '../catalog.ts';
import type { Target } from '../targets.ts';
import type { PersonalColumn, PersonColumns } from './catalog.ts';
import { personHash, wrappedContentHash } from './hmac.ts';
import { currentPolicy, type CompanyPolicy } from './policy.ts';

/**
 * The row path of personal data: a page's mapped rows, their `_extra` and the raw payloads of its rejects, made
 * what the company's policy lets be stored, after the content hash was taken from the clear values (so the
 * hash says whether the source changed, whatever the policy). A company that hashes and blocks nothing and has
 * erased nobody pays one small check per page, in the page's transaction.
 */

/** The part of a mapped page this step reads and rewrites. */
export interface PageRows {
  readonly target: Target;
  readonly companyKey: string;
  readonly mapped: readonly PageItem[];
}

/** A mapped record: its row and its child rows. */
export interface PageItem {
  readonly row: Row;
  readonly children: readonly Row[][];
}

export interface Refusal {
  raw: unknown;
  reason: string;
}

export interface PersonalDataApplied<R extends Refusal> {
  /** The refusals with their raw payloads under the policy. */
  readonly rejects: R[];
  /**
   * Puts the policy on the page's records about to be written, each once however often the page's transaction is
   * tried. A record found unchanged is not written, and its stored rows are under the policy already (a policy
   * change or an erasure rewrites what is stored): its content hash, keyed with the page, is all it needs.
   */
  readonly prepare: (items: readonly PageItem[]) => void;
  /** Sends the check that the policy is still the one the page was mapped under (first in its transaction). */
  readonly check: (pipe: Pipeline) => void;
}

/** Applies the company's current policy to a mapped page and its refusals (after fingerprinting). */
export async function applyPersonalData<R extends Refusal>(
  wh: Warehouse,
  page: PageRows,
  rejects: readonly R[],
): Promise<PersonalDataApplied<R>> {
  // The check below refuses a page mapped under a policy no longer stored, so the one last read serves unread.
  const policy = await currentPolicy(wh, page.companyKey, { cached: true });
  const check = (pipe: Pipeline) =>
    pipe.send(`select "${wh.schema}".check_personal_data_version($1::text, $2::text)`, [
      page.companyKey,
      policy.version,
    ]);
  return { ...applyPolicy(page, rejects, policy), check };
}

/**
 * A mapped page under a policy: its rows' content hashes keyed at once (the write compares them with the stored
 * ones), the refusals' payloads scrubbed, and the rest of the policy put on the records the write sends.
 */
export function applyPolicy<R extends Refusal>(
  page: PageRows,
  rejects: readonly R[],
  policy: CompanyPolicy,
): Omit<PersonalDataApplied<R>, 'check'> {
  if (!policy.hmac) return { rejects: [...rejects], prepare: () => {} };
  const names = page.target.personalNames ?? {};
  const scrubbed = rejects.map((r) => ({ ...r, raw: scrubJson(r.raw, policy, names, false) }));
  const plan = planUnder(planOf(page.target), policy);
  if (!plan.personal) return { rejects: scrubbed, prepare: () => {} };
  for (const m of page.mapped) keyContentHash(m, plan, policy);
  const done = new Set<Row>();
  return {
    rejects: scrubbed,
    prepare: (items) => {
      for (const m of items) {
        if (done.has(m.row)) continue;
        done.add(m.row);
        applyItem(m.row, m.children, plan, policy, names);
      }
    },
  };
}

/** What PostgreSQL's refusal of a page mapped under an older policy carries (check_personal_data_version). */
export const POLICY_CHANGED = 'WF412';

interface Plan {
  readonly main: readonly PersonalColumn[];
  readonly children: readonly (readonly PersonalColumn[])[];
  /** The target has personal columns at all (its rows' content hash is keyed under a policy). */
  readonly personal: boolean;
}

const plans = new WeakMap<Target, Plan>();

function planOf(target: Target): Plan {
  let plan = plans.get(target);
  if (plan) return plan;
  const catalog = target.personal ?? [];
  plan = {
    main: catalog.filter((c) => c.table === target.table),
    children: (target.children ?? []).map((child) => catalog.filter((c) => c.table === child.table)),
    personal: catalog.length > 0,
  };
  plans.set(target, plan);
  return plan;
}

/**
 * With nobody erased, only the columns whose field is hashed or blocked need looking at: worked out once per
 * target and policy rather than column by column for every row.
 */
const plansUnder = new WeakMap<CompanyPolicy, Map<Plan, Plan>>();

function planUnder(plan: Plan, policy: CompanyPolicy): Plan {
  if (policy.suppressed.size > 0) return plan;
  let byPlan = plansUnder.get(policy);
  if (!byPlan) plansUnder.set(policy, (byPlan = new Map()));
  let active = byPlan.get(plan);
  if (!active) {
    const acted = (cols: readonly PersonalColumn[]) => cols.filter((c) => policy.actions.has(c.field));
    byPlan.set(
      plan,
      (active = { main: acted(plan.main), children: plan.children.map(acted), personal: plan.personal }),
    );
  }
  return active;
}

/** Keys a record's content hash when the policy acts on it (a field hashed or blocked, or its person erased). */
function keyContentHash(m: PageItem, plan: Plan, policy: CompanyPolicy): void {
  if (policy.actions.size > 0 || namesErased(m, plan, policy))
    m.row._hash = wrappedContentHash(policy.hmac!, m.row._hash as string);
}

/** Whether a record names an erased person in any of its personal columns. */
function namesErased(m: PageItem, plan: Plan, policy: CompanyPolicy): boolean {
  if (policy.suppressed.size === 0) return false;
  for (const c of plan.main) if (personOf(m.row, c.person, policy)) return true;
  for (let i = 0; i < m.children.length; i++) {
    for (const child of m.children[i]!) {
      for (const c of plan.children[i] ?? [])
        if (personOf(c.parent ? m.row : child, c.parent?.person ?? c.person, policy)) return true;
    }
  }
  return false;
}

function applyItem(
  row: Row,
  children: readonly Row[][],
  plan: Plan,
  policy: CompanyPolicy,
  names: Readonly<Record<string, string>>,
): void {
  for (const c of plan.main) applyColumn(row, c, personOf(row, c.person, policy), policy);
  for (let i = 0; i < children.length; i++) {
    const cols = plan.children[i] ?? [];
    for (const child of children[i]!) {
      for (const c of cols)
        applyColumn(child, c, personOf(c.parent ? row : child, c.parent?.person ?? c.person, policy), policy);
      if (child._extra) child._extra = scrubJson(child._extra, policy, names, false);
    }
  }
  if (row._extra) row._extra = scrubJson(row._extra, policy, names, false);
}

/** Applies one column's action (block for an erased person). */
function applyColumn(row: Row, c: PersonalColumn, erased: boolean, policy: CompanyPolicy): void {
  const action = erased ? 'block' : policy.actions.get(c.field);
  if (action === 'block') {
    row[c.column] = null;
    for (const companion of c.companions) row[companion] = null;
  } else if (action === 'hash') {
    const v = row[c.column];
    if (typeof v === 'string') row[c.column] = policy.hmac!.of(v);
  }
}

/** Whether the person named by these columns of the row was erased. */
function personOf(row: Row, person: PersonColumns, policy: CompanyPolicy): boolean {
  if (policy.suppressed.size === 0) return false;
  return (
    erased(policy, 'service_id', row[person.serviceId ?? '']) ||
    erased(policy, 'employee_number', row[person.employeeNumber ?? ''])
  );
}

const erasedMemo = new WeakMap<CompanyPolicy, Map<string, boolean>>();

function erased(policy: CompanyPolicy, kind: 'service_id' | 'employee_number', value: unknown): boolean {
  if (value === null || value === undefined || value === '' || policy.suppressed.size === 0) return false;
  let memo = erasedMemo.get(policy);
  if (!memo) erasedMemo.set(policy, (memo = new Map()));
  const k = `${kind}:${String(value)}`;
  let hit = memo.get(k);
  if (hit === undefined) memo.set(k, (hit = policy.suppressed.has(personHash(policy.hmac!, kind, String(value)))));
  return hit;
}

/**
 * A JSON value (`_extra`, a raw payload, a pushed change) under the policy: personal fields found by name at any
 * depth are hashed or dropped, and every personal field of an object naming an erased person is dropped.
 * Returns `value` itself when nothing changes.
 */
export function scrubJson(
  value: unknown,
  policy: CompanyPolicy,
  names: Readonly<Record<string, string>>,
  blockAll: boolean,
): unknown {
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    value.forEach((v, i) => {
      const s = scrubJson(v, policy, names, blockAll);
      if (s !== v) (out ??= [...value])[i] = s;
    });
    return out ?? value;
  }
  if (typeof value !== 'object' || value === null) return value;
  const obj = value as Record<string, unknown>;
  const block =
    blockAll || erased(policy, 'service_id', obj.ServiceId) || erased(policy, 'employee_number', obj.EmployeeNumber);
  let out: Record<string, unknown> | undefined;
  for (const k in obj) {
    const v = obj[k];
    const field = Object.hasOwn(names, k) ? names[k] : undefined;
    const action = field ? (block ? 'block' : policy.actions.get(field)) : undefined;
    if (action === 'block') {
      out ??= { ...obj };
      delete out[k];
    } else if (action === 'hash' && typeof v === 'string') {
      (out ??= { ...obj })[k] = policy.hmac!.of(v);
    } else if (typeof v === 'object' && v !== null) {
      const s = scrubJson(v, policy, names, block);
      if (s !== v) (out ??= { ...obj })[k] = s;
    }
  }
  return out ?? value;
}
