import type { Warehouse } from '../connection.ts';
import type { Pipeline } from '../pipeline.ts';
import type { Row } from '../catalog.ts';
import type { Target } from '../targets.ts';
import type { PersonalColumn, PersonColumns } from './catalog.ts';
import { wrappedContentHash } from './hmac.ts';
import { classifiedPath, holdRaw, holdRecord } from './hold.ts';
import { actsOnFields, erased, scrubFields, scrubJson, type JsonCatalog } from './json.ts';
import { currentPolicy, type CompanyPolicy } from './policy.ts';

/**
 * The row path of personal data: a page's mapped rows, their `_extra` and the raw payloads of its rejects, made
 * what the company's policy lets be stored, after the content hash was taken from the clear values (so the
 * hash says whether the source changed, whatever the policy). A company that hashes and blocks nothing, has
 * erased nobody and holds no new field pays one small check per page, in the page's transaction.
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
 * A mapped page under a policy: its unclassified fields held (under `hold`), its rows' content hashes keyed at
 * once (the write compares them with the stored ones), the refusals' payloads scrubbed, and the rest of the
 * policy put on the records the write sends.
 */
export function applyPolicy<R extends Refusal>(
  page: PageRows,
  rejects: readonly R[],
  policy: CompanyPolicy,
): Omit<PersonalDataApplied<R>, 'check'> {
  if (!policy.hmac) return { rejects: [...rejects], prepare: () => {} };
  const target = page.target;
  const catalog: JsonCatalog = { names: target.personalNames ?? {}, kinds: target.personalKinds ?? {} };
  const scrubbed = rejects.map((r) => ({ ...r, raw: rawUnder(r.raw, target, policy, catalog) }));
  if (policy.hold) for (const m of page.mapped) holdRecord(m, target, policy, catalog.names);
  const plan = planUnder(planOf(target), policy);
  if (plan.personal) for (const m of page.mapped) keyContentHash(m, plan, policy);
  else if (!actsOnFields(policy) && policy.actions.size === 0) return { rejects: scrubbed, prepare: () => {} };
  const done = new Set<Row>();
  return {
    rejects: scrubbed,
    prepare: (items) => {
      for (const m of items) {
        if (done.has(m.row)) continue;
        done.add(m.row);
        applyItem(m, target, plan, policy, catalog);
      }
    },
  };
}

/** A refusal's raw payload under the policy: the catalog's fields by name, classified ones by path, held ones. */
function rawUnder(raw: unknown, target: Target, policy: CompanyPolicy, catalog: JsonCatalog): unknown {
  const scrubbed = scrubFields(scrubJson(raw, policy, catalog, false), policy, '', false);
  return policy.hold ? holdRaw(scrubbed, target, (p) => classifiedPath(policy, catalog.names, p)) : scrubbed;
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

function applyItem(m: PageItem, target: Target, plan: Plan, policy: CompanyPolicy, catalog: JsonCatalog): void {
  const { row, children } = m;
  let rowErased = false;
  for (const c of plan.main) {
    const erasedHere = personOf(row, c.person, policy);
    rowErased ||= erasedHere;
    applyColumn(row, c, erasedHere, policy);
  }
  const lists = target.children ?? [];
  for (let i = 0; i < children.length; i++) {
    const cols = plan.children[i] ?? [];
    for (const child of children[i]!) {
      let childErased = false;
      for (const c of cols) {
        const erasedHere = personOf(c.parent ? row : child, c.parent?.person ?? c.person, policy);
        childErased ||= erasedHere && !c.parent;
        applyColumn(child, c, erasedHere, policy);
      }
      if (child._extra) child._extra = extraUnder(child._extra, `${lists[i]!.path}.`, childErased, policy, catalog);
    }
  }
  if (row._extra) row._extra = extraUnder(row._extra, '', rowErased, policy, catalog);
}

/** A row's `_extra` under the policy: the catalog's fields by name, the classified ones by path. */
function extraUnder(
  extra: unknown,
  prefix: string,
  rowErased: boolean,
  policy: CompanyPolicy,
  catalog: JsonCatalog,
): unknown {
  return scrubFields(scrubJson(extra, policy, catalog, false), policy, prefix, rowErased);
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
