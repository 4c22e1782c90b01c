import { audited, type Actor, type AuditNote } from '../warehouse/audit.ts';
import type { PushKind } from '../warehouse/tables/push.ts';
import { intake, knownCompanies, type IntakeContext, type IntakeResult } from './intake.ts';
import { runModel, type ModelRunResult } from './model-run.ts';
import { addModel, removeModel, setModelPaused, type NewModel, type PushModel } from './models.ts';
import { getChange, retryChange, type PushStatus } from './outbox.ts';

/**
 * The push changes an operator or an HR system makes, audited, the same from the CLI, the API and the dashboard:
 * pushed changes (named by their ids, never their values), retries, and the push models' verbs.
 */

/** The one company the changes are for, when they are for one. */
async function companyOf(ctx: IntakeContext, items: readonly unknown[]): Promise<string | undefined> {
  const named = new Set(items.map((i) => (i as { company?: unknown } | null)?.company));
  if (named.size === 1) {
    const [only] = named;
    if (typeof only === 'string') return only;
  }
  const known = await knownCompanies(ctx);
  return known.length === 1 ? known[0]!.key : undefined;
}

/** Stores changes for the service; a refusal (nothing stored) is audited as refused. */
export function pushChanges(
  ctx: IntakeContext,
  by: Actor,
  kind: PushKind,
  items: readonly unknown[],
): Promise<IntakeResult> {
  return audited(ctx.warehouse, by, 'push', { target: kind }, async (note) => {
    const result = await intake(ctx, kind, items);
    if (!result.ok) {
      note.refused(`${result.refused.length} of ${items.length} changes refused: nothing was stored`);
      return result;
    }
    const ids = result.accepted.map((a) => a.id);
    const company = await companyOf(ctx, items);
    if (company) note.company(company);
    note.target(
      `${kind}: ${ids.length === 1 ? `change ${ids[0]}` : `changes ${ids[0]}-${ids.at(-1)} (${ids.length})`}`,
    );
    return result;
  });
}

/** Sends a failed or refused change again; one that is neither is a refusal. */
export function retryPush(ctx: IntakeContext, by: Actor, id: number): Promise<PushStatus | undefined> {
  const wh = ctx.warehouse;
  return audited(wh, by, 'push retry', { target: `change ${id}` }, async (note) => {
    const before = await getChange(wh.sql, wh, id);
    if (before) note.company(before.company);
    if (!before || !['failed', 'refused'].includes(before.status)) {
      note.refused(before ? `change ${id} is ${before.status}, not failed or refused` : `no change ${id}`);
      return before;
    }
    const change = await retryChange(wh.sql, wh, id);
    if (change && !['queued', 'in_doubt'].includes(change.status))
      note.refused(`change ${id} has nothing left to send`);
    return change;
  });
}

const model = (name: string) => ({ target: `model ${name}` });
const ofModel = (note: AuditNote, m: { company: string }) => note.company(m.company);

export function addPushModel(
  ctx: IntakeContext,
  by: Actor,
  m: NewModel,
  companies: readonly string[],
): Promise<PushModel> {
  return audited(ctx.warehouse, by, 'push model add', { ...model(m.name), company: m.company }, () =>
    addModel(ctx.warehouse, m, companies, ctx.policy),
  );
}

export function removePushModel(ctx: IntakeContext, by: Actor, name: string): Promise<void> {
  return audited(ctx.warehouse, by, 'push model remove', model(name), () => removeModel(ctx.warehouse, name));
}

export function pausePushModel(ctx: IntakeContext, by: Actor, name: string, paused: boolean): Promise<PushModel> {
  return audited(ctx.warehouse, by, paused ? 'push model pause' : 'push model resume', model(name), async (note) => {
    const m = await setModelPaused(ctx.warehouse, name, paused);
    ofModel(note, m);
    return m;
  });
}

/** Runs a model now; a run that fails (over its cap, its query refused) is audited as refused. */
export function runPushModel(ctx: IntakeContext, by: Actor, name: string): Promise<ModelRunResult> {
  return audited(ctx.warehouse, by, 'push model run', model(name), async (note) => {
    const r = await runModel(ctx, name);
    ofModel(note, r);
    note.target(`model ${name}: ${r.queued} queued`);
    if (r.outcome !== 'ok') note.refused(r.error ?? 'the run failed');
    return r;
  });
}
