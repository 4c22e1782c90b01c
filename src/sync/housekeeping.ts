import { finishRun, type RunOutcome } from '../warehouse/runs.ts';
import { DEFAULT_RETENTION } from '../config.ts';
import { pruneEvents, prunePushPayloads, pruneResolvedRejects, pruneRuns } from '../warehouse/retention.ts';
import { abandonEnd, openRun } from '../warehouse/runs.ts';
import { eraseFormerIndividuals } from '../warehouse/personal-data/admin.ts';
import { pruneAudit, recordAudit, SYSTEM } from '../warehouse/audit.ts';
import { personalData } from '../resources/index.ts';
import { emptyCounters, type SyncContext } from './context.ts';
import type { SyncSummary } from './runner.ts';

/** The name housekeeping's runs have in sync_runs. */
export const HOUSEKEEPING = 'housekeeping';

/** What one housekeeping run pruned, per kind. */
export interface Pruned {
  runs: number;
  resolvedRejects: number;
  pushPayloads: number;
  /** Timeline events, kept as long as the runs. */
  events: number;
  /** Individuals whose personal fields were blocked for having left longer ago than WFS_KEEP_FORMER_PERSONAL_DAYS. */
  formerErased: number;
  /** Audit rows older than WFS_KEEP_AUDIT_DAYS. */
  audit: number;
}

/** A run that changed something is a change by `system`: what it pruned and erased, counted. */
async function auditPruned(ctx: SyncContext, pruned: Pruned, error: string | undefined): Promise<void> {
  const counts = Object.entries(pruned).filter(([, n]) => n > 0);
  if (counts.length === 0 && !error) return;
  await recordAudit(ctx.warehouse, {
    actor: SYSTEM,
    action: 'housekeeping',
    company: ctx.companyKey,
    target: counts.map(([k, n]) => `${k} ${n}`).join(', ') || null,
    outcome: error ? 'failed' : 'done',
    reason: error ? 'an unexpected error (the log has it)' : null,
  });
}

/**
 * Prunes one company's bookkeeping by the retention settings, recorded as a run of its own whose details count
 * what was pruned. Answers like a sync of one stream, so the job runners treat it as any other job.
 */
export async function runHousekeeping(ctx: SyncContext): Promise<SyncSummary> {
  const started = Date.now();
  const wh = ctx.warehouse;
  const keep = ctx.retention ?? DEFAULT_RETENTION;
  const runId = await openRun(wh, { companyKey: ctx.companyKey, stream: HOUSEKEEPING });
  let outcome: 'ok' | 'failed' = 'ok';
  let error: string | undefined;
  const pruned: Pruned = { runs: 0, resolvedRejects: 0, pushPayloads: 0, events: 0, formerErased: 0, audit: 0 };
  try {
    pruned.runs = await pruneRuns(wh, ctx.companyKey, keep.runsDays);
    pruned.resolvedRejects = await pruneResolvedRejects(wh, ctx.companyKey, keep.resolvedRejectsDays);
    pruned.pushPayloads = await prunePushPayloads(wh, ctx.companyKey, keep.pushPayloadsDays);
    pruned.events = await pruneEvents(wh, ctx.companyKey, keep.runsDays);
    pruned.audit = await pruneAudit(wh, ctx.companyKey, keep.auditDays ?? DEFAULT_RETENTION.auditDays);
    if (keep.formerPersonalDays !== undefined)
      pruned.formerErased = (
        await eraseFormerIndividuals(wh, personalData, ctx.companyKey, keep.formerPersonalDays)
      ).people;
  } catch (e) {
    outcome = 'failed';
    error = (e as Error).message;
    ctx.log.error({ err: e, pruned }, 'housekeeping failed');
  }
  const durationMs = Date.now() - started;
  // finishRun keeps what is not a column in the run's details.
  const record: RunOutcome & { pruned: Pruned; durationMs: number } = {
    outcome,
    ...(error ? { error } : {}),
    pruned,
    durationMs,
  };
  await finishRun(wh, { companyKey: ctx.companyKey, id: runId }, record).catch((e: unknown) => {
    abandonEnd(wh, runId);
    throw e;
  });
  await auditPruned(ctx, pruned, error);
  ctx.log.info({ pruned, durationMs }, 'housekeeping done');
  return {
    companyKey: ctx.companyKey,
    streams: [{ stream: HOUSEKEEPING, outcome, ...(error ? { error } : {}), ...emptyCounters(), durationMs }],
    requests: 0,
    rows: 0,
    rejects: 0,
    failed: outcome === 'failed' ? 1 : 0,
    interrupted: 0,
    durationMs,
  };
}
