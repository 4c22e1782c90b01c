import { createHash } from 'node:crypto';
import { snake } from '../warehouse/mapper.ts';
import { tableInfo } from '../warehouse/catalog.ts';
import type { PushModelOutcome } from '../warehouse/tables/push.ts';
import { KEEP_EVERYTHING, treatmentOf, type FieldTreatment } from './field-policy.ts';
import type { IntakeContext } from './intake.ts';
import { getModel, MODEL_KINDS, readOnly, runsTable, subquery, type PushModel } from './models.ts';
import { store } from './outbox.ts';
import { diffFields } from './preview.ts';
import { checkers, type Accepted, type Fields } from './validate.ts';

/**
 * A model's run: its query diffed against the warehouse's current rows by key, in Postgres, read only; each row
 * that differs becomes an update of only the differing fields (or an insert, for a key the warehouse lacks),
 * checked by push validation and queued in one transaction. Over the model's cap nothing is queued. A change's
 * id is derived from the model, the key and the content, so running again before or after it applied queues it
 * once. A preview is the same diff and checks, storing nothing.
 */

export interface ModelChange {
  key: unknown;
  action: 'insert' | 'update';
  record: Record<string, number> | null;
  changed: Record<string, [unknown, unknown]>;
  unchanged: string[];
  valid: boolean;
  refused?: Fields;
  changeId: string;
  /** The outbox's id, once queued. */
  id?: number;
}

/** What a model run found and did with the rows of its query. */
export interface ModelRunCounts {
  rowsRead: number;
  unchanged: number;
  changed: number;
  queued: number;
  refused: number;
  overCap: boolean;
}

export interface ModelRunResult extends ModelRunCounts {
  model: string;
  company: string;
  runId?: number;
  outcome: PushModelOutcome;
  error?: string;
  /** Postgres's word on a query that failed: for the operator (CLI, push_model_runs), never in an HTTP answer. */
  detail?: string;
  /** Every changed row (a preview, or refused rows of a run); a run lists only the refused. */
  changes: ModelChange[];
}

interface Candidate {
  desired: Record<string, unknown>;
  current: Record<string, unknown> | null;
}

/**
 * The rows of the query that differ from the warehouse on a field the model names (compared as text, so no
 * value of the operator's query can fail a cast), at most `limit`, with how many differ in all and how many
 * rows the query gave. A hashed field cannot be compared in Postgres: a model naming one gets every row back,
 * compared afterwards by its hash.
 */
async function differing(
  ctx: IntakeContext,
  m: PushModel,
  limit: number | null,
): Promise<{ rowsRead: number; total: number; rows: Candidate[] }> {
  const wh = ctx.warehouse;
  const k = MODEL_KINDS[m.kind];
  const treatments = await (ctx.policy ?? KEEP_EVERYTHING).fieldPolicy(m.company);
  const hashed = m.fields.some((f) => treatmentOf(treatments, f) === 'hash');
  const col = (i: number) => `m."${m.columns[i]!.replace(/"/g, '""')}"`;
  const keyIndex = m.fields.indexOf(m.keyField);
  const compared = m.fields.map((f, i) => ({ f, i })).filter(({ f }) => f !== m.keyField);
  const differs = hashed
    ? 'true'
    : ['w._key_ is null', ...compared.map(({ f, i }) => `${col(i)}::text is distinct from w.${snake(f)}::text`)].join(
        ' or ',
      );
  const table = `"${wh.schema}"."${k.table}"`;
  const keyColumn = snake(m.keyField);
  // One pass over the company's current rows, hashed by key as text: no value of the query can fail a cast.
  const sql = `
    with m as (${subquery(m.query)}),
    current_rows as (
      select distinct on (c.${keyColumn}) c.*, true as _key_ from ${table} c
      where c.company_key = $1 and c._deleted_at is null and c.${keyColumn} is not null
      order by c.${keyColumn}, c.${tableInfo(k.table).primaryKey.at(-1)})
    select to_jsonb(m) as desired, case when w._key_ is null then null else to_jsonb(w) - '_key_' end as current, count(*) over () as total
    from m left join current_rows w on w.${keyColumn}::text = ${col(keyIndex)}::text
    where ${differs}
    ${limit === null ? '' : `limit ${limit}`}`;
  return readOnly(wh.sql, async (tx) => {
    const [{ n }] = (await tx.unsafe(`select count(*)::int as n from (${subquery(m.query)}) as model`)) as unknown as [
      { n: number },
    ];
    const rows = await tx.unsafe<(Candidate & { total: string })[]>(sql, [m.company]);
    return { rowsRead: n, total: rows[0] ? Number(rows[0].total) : 0, rows };
  });
}

/** The field → value of a desired row, by the model's field names. */
function desiredFields(m: PushModel, row: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(m.fields.map((f, i) => [f, row[m.columns[i]!] ?? null]));
}

const changeIdOf = (m: PushModel, key: unknown, changed: Record<string, [unknown, unknown]>) =>
  `model:${m.name}:${createHash('sha256')
    .update(JSON.stringify([m.name, key, Object.entries(changed).sort(([a], [b]) => (a < b ? -1 : 1))]))
    .digest('hex')
    .slice(0, 40)}`;

/** One differing row as a change: checked by push validation, not stored. */
async function changeOf(
  ctx: IntakeContext,
  m: PushModel,
  c: Candidate,
  treatments: ReadonlyMap<string, FieldTreatment>,
): Promise<{ change: ModelChange; accepted?: Accepted } | undefined> {
  const k = MODEL_KINDS[m.kind];
  const want = desiredFields(m, c.desired);
  const key = want[m.keyField];
  const policy = ctx.policy ?? KEEP_EVERYTHING;
  const settable = Object.fromEntries(
    Object.entries(want).filter(([f, v]) => f !== m.keyField && (c.current || v !== null)),
  );
  const diff = diffFields(k.table, settable, c.current ?? {}, [], { treatments, policy });
  const changed = diff.changed ?? {};
  if (c.current && Object.keys(changed).length === 0) return undefined;
  const record: Record<string, number> | null = c.current
    ? m.kind === 'individuals'
      ? { ServiceId: Number(c.current.service_id) }
      : { IndividualCertificationId: Number(c.current.individual_certification_id) }
    : null;
  const changeId = changeIdOf(m, key, changed);
  const base = {
    key,
    action: c.current ? ('update' as const) : ('insert' as const),
    record,
    changed,
    unchanged: diff.unchanged ?? [],
    changeId,
  };
  const item: Record<string, unknown> = {
    changeId,
    company: m.company,
    [m.keyField]: key,
    ...Object.fromEntries(Object.entries(changed).map(([f]) => [f, want[f]])),
  };
  if (record) Object.assign(item, record);
  if (!c.current && m.keyField !== 'EmployeeNumber' && m.keyField !== 'UniqueNumber') {
    return {
      change: {
        ...base,
        valid: false,
        refused: {
          [m.keyField]: `the warehouse has no record with ${m.keyField} ${String(key)}: a model inserts only by EmployeeNumber or UniqueNumber`,
        },
      },
    };
  }
  const company = ctx.companies.find((x) => x.key === m.company) ?? { key: m.company };
  const checked = checkers[k.push](item, company);
  if (!checked.ok) return { change: { ...base, valid: false, refused: checked.fields } };
  return { change: { ...base, valid: true }, accepted: checked.change };
}

async function diffModel(
  ctx: IntakeContext,
  m: PushModel,
  forRun: boolean,
): Promise<Omit<ModelRunResult, 'runId' | 'outcome' | 'queued'> & { accepted: Accepted[] }> {
  const treatments = await (ctx.policy ?? KEEP_EVERYTHING).fieldPolicy(m.company);
  // A run reads one row past its cap to know it is over; a preview reads them all.
  const found = await differing(
    ctx,
    m,
    forRun && !m.fields.some((f) => treatmentOf(treatments, f) === 'hash') ? m.maxChanges + 1 : null,
  );
  const changes: ModelChange[] = [];
  const accepted: Accepted[] = [];
  for (const c of found.rows) {
    const made = await changeOf(ctx, m, c, treatments);
    if (!made) continue;
    changes.push(made.change);
    if (made.accepted) accepted.push(made.accepted);
  }
  const changed = found.rows.length > changes.length ? found.total - (found.rows.length - changes.length) : found.total;
  return {
    model: m.name,
    company: m.company,
    rowsRead: found.rowsRead,
    unchanged: found.rowsRead - changed,
    changed,
    refused: changes.filter((c) => !c.valid).length,
    overCap: changed > m.maxChanges,
    changes,
    accepted,
  };
}

/** The dry run of the whole model: what a run would queue and refuse now; nothing is stored or sent. */
export async function previewModel(ctx: IntakeContext, name: string): Promise<ModelRunResult> {
  const m = await getModel(ctx.warehouse, name);
  const { accepted: _accepted, ...diff } = await diffModel(ctx, m, false);
  return {
    ...diff,
    outcome: diff.overCap ? 'failed' : 'ok',
    queued: 0,
    error: diff.overCap ? overCapMessage(m, diff.changed) : undefined,
  };
}

const overCapMessage = (m: PushModel, changed: number) =>
  `model ${m.name}: ${changed} rows differ from the warehouse, more than its --max-changes ${m.maxChanges}: nothing queued`;

/** Runs the model once, kept in push_model_runs whatever its outcome. */
export async function runModel(ctx: IntakeContext, name: string): Promise<ModelRunResult> {
  const wh = ctx.warehouse;
  const m = await getModel(wh, name);
  const [run] = await wh.sql.unsafe<{ id: string }[]>(
    `insert into ${runsTable(wh)} (model_name, company_key) values ($1, $2) returning id`,
    [m.name, m.company],
  );
  const runId = Number(run!.id);
  let result: ModelRunResult;
  try {
    const { accepted, ...diff } = await diffModel(ctx, m, true);
    if (diff.overCap) {
      result = { ...diff, runId, outcome: 'failed', queued: 0, error: overCapMessage(m, diff.changed), changes: [] };
    } else {
      const stored = accepted.length > 0 ? await store(wh, m.company, accepted, ctx.sealer) : [];
      const ids = new Map(stored.map((s) => [s.changeId, s.id]));
      const changes = diff.changes.map((c) => (ids.has(c.changeId) ? { ...c, id: ids.get(c.changeId) } : c));
      result = { ...diff, runId, outcome: 'ok', queued: stored.length, changes: changes.filter((c) => !c.valid) };
    }
  } catch (err) {
    const detail = err instanceof Error ? err.message.split('\n')[0]! : String(err);
    result = {
      model: m.name,
      company: m.company,
      runId,
      outcome: 'failed',
      rowsRead: 0,
      unchanged: 0,
      changed: 0,
      queued: 0,
      refused: 0,
      overCap: false,
      error: `model ${m.name}: its query failed`,
      detail,
      changes: [],
    };
  }
  await wh.sql.unsafe(
    `update ${runsTable(wh)} set finished_at = now(), outcome = $2, rows_read = $3, unchanged = $4, changed = $5, queued = $6, refused = $7, over_cap = $8, error = $9 where id = $1`,
    [
      runId,
      result.outcome,
      result.rowsRead,
      result.unchanged,
      result.changed,
      result.queued,
      result.refused,
      result.overCap,
      result.detail ? `${result.error}: ${result.detail}` : (result.error ?? null),
    ],
  );
  return result;
}

export interface ModelRunRow extends ModelRunCounts {
  id: number;
  model: string;
  company: string;
  startedAt: string;
  finishedAt: string | null;
  outcome: PushModelOutcome | null;
  error: string | null;
}

/** The latest runs, newest first (of one model, or of all). */
export async function listModelRuns(
  ctx: Pick<IntakeContext, 'warehouse'>,
  o: { model?: string; limit?: number } = {},
): Promise<ModelRunRow[]> {
  const wh = ctx.warehouse;
  const rows = await wh.sql.unsafe<Record<string, unknown>[]>(
    `select * from ${runsTable(wh)} where ($1::text is null or model_name = $1) order by id desc limit $2`,
    [o.model ?? null, o.limit ?? 50],
  );
  return rows.map((r) => ({
    id: Number(r.id),
    model: String(r.model_name),
    company: String(r.company_key),
    startedAt: (r.started_at as Date).toISOString(),
    finishedAt: r.finished_at ? (r.finished_at as Date).toISOString() : null,
    outcome: (r.outcome as PushModelOutcome | null) ?? null,
    rowsRead: Number(r.rows_read),
    unchanged: Number(r.unchanged),
    changed: Number(r.changed),
    queued: Number(r.queued),
    refused: Number(r.refused),
    overCap: Boolean(r.over_cap),
    error: (r.error as string | null) ?? null,
  }));
}
