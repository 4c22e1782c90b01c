import { Cron } from 'croner';
import type { Sql } from 'postgres';
import { snake } from '../warehouse/mapper.ts';
import type { Warehouse } from '../warehouse/connection.ts';
import { tableInfo } from '../warehouse/catalog.ts';
import { PUSH_MODEL_KINDS, type PushKind, type PushModelKind } from '../warehouse/tables/push.ts';
import { KEEP_EVERYTHING, treatmentOf, type FieldPolicy } from './field-policy.ts';
import { CertificationChange, IndividualChange, READ_ONLY } from './validate.ts';

/**
 * Push models: an operator's SQL query of the desired state, stored in push_models. Everything a run would
 * refuse about the model itself is refused when it is added, in one line: a query that does not plan, a column
 * that is no service field, a read-only field, one the warehouse does not keep or the company's policy blocks.
 */

export type ModelErrorKind = 'invalid' | 'unknown_model' | 'already_added' | 'query_refused';

/**
 * Why a model cannot be added or found; `kind` tells a caller which (the HTTP status, the exit code). `detail` is
 * Postgres's own word on a query that does not plan: for the operator at the CLI and in the log, never in an
 * HTTP answer.
 */
export class ModelError extends Error {
  constructor(
    readonly kind: ModelErrorKind,
    message: string,
    readonly detail?: string,
  ) {
    super(message);
  }
}

export interface PushModel {
  name: string;
  company: string;
  kind: PushModelKind;
  query: string;
  keyField: string;
  /** The query's columns as service fields, in order; `columns` holds each one's name in the query. */
  fields: string[];
  columns: string[];
  cron: string | null;
  maxChanges: number;
  paused: boolean;
  createdAt: string;
  updatedAt: string;
}

export interface NewModel {
  name: string;
  company: string;
  kind: string;
  query: string;
  keyField: string;
  cron?: string | null;
  maxChanges?: number;
}

export const MODEL_NAME = /^[A-Za-z0-9_-]{1,64}$/;
/** How long a model's query may run, at `add` and in a run. */
export const MODEL_STATEMENT_TIMEOUT = '60s';

/** What each kind of model writes to, and by which keys a row is matched. */
export const MODEL_KINDS: Record<
  PushModelKind,
  { push: PushKind; table: string; keys: readonly string[]; settable: readonly string[] }
> = {
  individuals: {
    push: 'individual',
    table: 'individuals',
    keys: ['EmployeeNumber', 'UniqueNumber', 'ServiceId'],
    settable: Object.keys(IndividualChange.shape).filter((f) => f !== 'changeId' && f !== 'company'),
  },
  certifications: {
    push: 'certification',
    table: 'individual_certifications',
    keys: ['IndividualCertificationId'],
    // A credential's holder is who holds it, not something an update sets.
    settable: Object.keys(CertificationChange.shape).filter(
      (f) => !['changeId', 'company', 'ServiceId', 'EmployeeNumber', 'UniqueIdentifier'].includes(f),
    ),
  },
};

export const modelsTable = (wh: { schema: string }) => `"${wh.schema}"."push_models"`;
export const runsTable = (wh: { schema: string }) => `"${wh.schema}"."push_model_runs"`;

/** The query as a subquery: a trailing semicolon dropped (it is one statement, sent as one). */
export const subquery = (query: string) => query.trim().replace(/;\s*$/, '');

/** Runs `work` in a read-only transaction with the models' statement timeout: an operator's query writes nothing. */
export async function readOnly<T>(sql: Sql, work: (tx: Sql) => Promise<T>): Promise<T> {
  return sql.begin('read only', async (tx) => {
    await tx.unsafe(`set local statement_timeout = '${MODEL_STATEMENT_TIMEOUT}'`);
    return work(tx as unknown as Sql);
  }) as Promise<T>;
}

/** The service field a query column names: the field itself, or its `snake_case` as the warehouse's column. */
export function fieldOfColumn(kind: PushModelKind, column: string): string | undefined {
  const k = MODEL_KINDS[kind];
  const all = [...k.settable, ...READ_ONLY[k.push]];
  return all.find((f) => f === column) ?? all.find((f) => snake(f) === column);
}

/** The query's columns, as the query names them, learnt without reading a row; a query that does not plan is refused. */
async function columnsOf(wh: Warehouse, query: string): Promise<string[]> {
  try {
    return await readOnly(wh.sql, async (tx) => {
      await tx.unsafe(`explain select * from (${subquery(query)}) as model`);
      const result = await tx.unsafe(`select * from (${subquery(query)}) as model limit 0`);
      return result.columns.map((c) => c.name);
    });
  } catch (err) {
    const detail = err instanceof Error ? err.message.split('\n')[0] : String(err);
    throw new ModelError('query_refused', 'query: it does not plan', detail);
  }
}

/** Each column checked, in one line naming every column refused. */
async function checkedFields(
  _wh: Warehouse,
  m: NewModel & { kind: PushModelKind },
  columns: readonly string[],
  policy: FieldPolicy,
): Promise<string[]> {
  const k = MODEL_KINDS[m.kind];
  const table = tableInfo(k.table);
  const treatments = await policy.fieldPolicy(m.company);
  const refusals: string[] = [];
  const fields = columns.map((column) => {
    const field = fieldOfColumn(m.kind, column);
    if (!field) refusals.push(`${column} is not a field of ${m.kind}`);
    else if (READ_ONLY[k.push].includes(field))
      refusals.push(`${field} is read only: the service sets it, so it cannot be pushed`);
    else if (field !== m.keyField && !table.byName.has(snake(field)))
      refusals.push(`${field} is not kept in the warehouse, so it cannot be compared`);
    else if (treatmentOf(treatments, field) === 'block')
      refusals.push(`${field} is blocked by the company's personal-data policy, so it cannot be compared`);
    return field ?? column;
  });
  if (new Set(fields).size !== fields.length) refusals.push('two columns name the same field');
  if (!fields.includes(m.keyField)) refusals.push(`the query has no ${m.keyField} column, the model's key`);
  if (refusals.length > 0) throw new ModelError('invalid', `model ${m.name}: ${refusals.join('; ')}`);
  return fields;
}

function checkedShape(m: NewModel): NewModel & { kind: PushModelKind } {
  if (!MODEL_NAME.test(m.name)) throw new ModelError('invalid', 'name: expected letters, digits, - or _ (at most 64)');
  if (!PUSH_MODEL_KINDS.includes(m.kind as PushModelKind))
    throw new ModelError('invalid', `--kind must be one of ${PUSH_MODEL_KINDS.join(', ')}`);
  const keys = MODEL_KINDS[m.kind as PushModelKind].keys;
  if (!keys.includes(m.keyField))
    throw new ModelError('invalid', `--key must be one of ${keys.join(', ')} for ${m.kind}`);
  if (!m.query.trim()) throw new ModelError('invalid', '--sql: the query is empty');
  if (m.maxChanges !== undefined && (!Number.isInteger(m.maxChanges) || m.maxChanges < 1 || m.maxChanges > 1_000_000)) {
    throw new ModelError('invalid', '--max-changes: expected a whole number from 1 to 1000000');
  }
  if (m.cron) {
    try {
      new Cron(m.cron, { paused: true, timezone: 'UTC' }).stop();
    } catch (err) {
      throw new ModelError('invalid', `--cron: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  return m as NewModel & { kind: PushModelKind };
}

/** Adds a model for one of `companies` (the keys push intake knows). */
export async function addModel(
  wh: Warehouse,
  model: NewModel,
  companies: readonly string[],
  policy: FieldPolicy = KEEP_EVERYTHING,
): Promise<PushModel> {
  const m = checkedShape(model);
  if (!companies.includes(m.company))
    throw new ModelError(
      'invalid',
      `company: unknown company "${m.company.slice(0, 40)}" (configured: ${companies.join(', ')})`,
    );
  const columns = await columnsOf(wh, m.query);
  const fields = await checkedFields(wh, m, columns, policy);
  const rows = await wh.sql.unsafe<ModelRow[]>(
    `insert into ${modelsTable(wh)} (name, company_key, kind, query, key_field, service_fields, cron, max_changes)
     values ($1, $2, $3, $4, $5, $6::text[], $7, $8) on conflict (name) do nothing returning *`,
    [m.name, m.company, m.kind, m.query, m.keyField, fields, m.cron ?? null, m.maxChanges ?? 100],
  );
  if (!rows[0]) throw new ModelError('already_added', `model ${m.name} already exists: remove it first`);
  return modelOf(rows[0], columns);
}

export interface ModelRow {
  name: string;
  company_key: string;
  kind: PushModelKind;
  query: string;
  key_field: string;
  service_fields: string[];
  cron: string | null;
  max_changes: number;
  paused: boolean;
  created_at: Date;
  updated_at: Date;
}

function modelOf(r: ModelRow, columns?: readonly string[]): PushModel {
  return {
    name: r.name,
    company: r.company_key,
    kind: r.kind,
    query: r.query,
    keyField: r.key_field,
    fields: r.service_fields,
    columns: columns ? [...columns] : r.service_fields,
    cron: r.cron,
    maxChanges: r.max_changes,
    paused: r.paused,
    createdAt: r.created_at.toISOString(),
    updatedAt: r.updated_at.toISOString(),
  };
}

export async function listModels(wh: Warehouse): Promise<PushModel[]> {
  const rows = await wh.sql.unsafe<ModelRow[]>(`select * from ${modelsTable(wh)} order by name`);
  return rows.map((r) => modelOf(r));
}

/** The model, with each field's column name in its query learnt again (a query may name `first_name` or `FirstName`). */
export async function getModel(wh: Warehouse, name: string): Promise<PushModel> {
  const [row] = await wh.sql.unsafe<ModelRow[]>(`select * from ${modelsTable(wh)} where name = $1`, [name]);
  if (!row) throw new ModelError('unknown_model', `no model named "${name.slice(0, 64)}"`);
  return modelOf(row, await columnsOf(wh, row.query));
}

export async function setModelPaused(wh: Warehouse, name: string, paused: boolean): Promise<PushModel> {
  const [row] = await wh.sql.unsafe<ModelRow[]>(
    `update ${modelsTable(wh)} set paused = $2, updated_at = now() where name = $1 returning *`,
    [name, paused],
  );
  if (!row) throw new ModelError('unknown_model', `no model named "${name.slice(0, 64)}"`);
  return modelOf(row);
}

/** Removes the model; its runs stay in push_model_runs, and the changes it queued in the outbox. */
export async function removeModel(wh: Warehouse, name: string): Promise<void> {
  const rows = await wh.sql.unsafe(`delete from ${modelsTable(wh)} where name = $1 returning name`, [name]);
  if (rows.length === 0) throw new ModelError('unknown_model', `no model named "${name.slice(0, 64)}"`);
}
