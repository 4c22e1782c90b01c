import type { Warehouse } from '../connection.ts';
import { tableInfo } from '../catalog.ts';
import type { PersonalCatalog, PersonalColumn, PersonColumns } from './catalog.ts';
import { extraTables, type PersonalData } from './data.ts';
import { personalHmac, wrappedContentHashSql, type PersonalHmac } from './hmac.ts';
import { governedActions } from './policy.ts';

/**
 * Rewrites what is stored, in SQL, without a request to the service: a company's rows under its policy (every
 * table the catalog names, history versions included, `_extra` of every table, rejects' raw payloads), or one
 * erased person's fields everywhere. Each statement rewrites a batch of rows that still need it, so an interrupted
 * rewrite resumes where it stopped when run again, and a batch that meets a page being written waits for it.
 */

/** Rows rewritten per table. */
export type RewriteCounts = Record<string, number>;

export const REWRITE_BATCH = 5000;

/** A hashed value: 64 hex digits. */
const HEX = `'^[0-9a-f]{64}$'`;

const q = (name: string) => `"${name}"`;

export interface Update {
  table: string;
  sets: string[];
  /** Rows that still need the update (false once it is done: what makes a batch loop end). */
  pending: string[];
  /** Which rows of the company the update is for (an erasure: the person's). */
  scope?: string;
}

/**
 * The parameters after the company ($1) of every rewrite: the key's pads; the catalog's names blocked and hashed
 * in JSON; an erasure's service ids and employee numbers; the classified fields' paths blocked and hashed.
 */
const PARAM_TYPES = ['bytea', 'bytea', 'text[]', 'text[]', 'int[]', 'text[]', 'text[]', 'text[]'];

/**
 * Runs `update` over the company's rows in batches until none is pending; the number of rows rewritten. A batch
 * names its rows by key, the company's first, so that on Citus the statement runs on the company's shard alone.
 */
export async function runBatches(
  wh: Warehouse,
  u: Update,
  params: readonly unknown[],
  batch: number,
  types: readonly string[] = PARAM_TYPES,
): Promise<number> {
  const t = `${q(wh.schema)}.${q(u.table)}`;
  const key = tableInfo(u.table).primaryKey.filter((k) => k !== 'company_key');
  // Every parameter typed once, used or not by this table's update.
  const typed = `select ${types.map((type, i) => `$${i + 2}::${type}`).join(', ')}`;
  const statement = `with typed as (${typed}), batch as (
  select ${key.map(q).join(', ')} from ${t} where company_key = $1${u.scope ? ` and (${u.scope})` : ''} and (${u.pending.join(' or ')}) limit ${batch}
) update ${t} x set ${u.sets.join(', ')} from batch
where x.company_key = $1 and ${key.map((k) => `x.${q(k)} = batch.${q(k)}`).join(' and ')}`;
  let total = 0;
  for (;;) {
    const n = await withDeadlockRetry(async () => (await wh.sql.unsafe(statement, params as never[])).count);
    total += n;
    if (n < batch) return total;
  }
}

/** A batch that deadlocked with a page writing the same rows is tried again (the page went first). */
async function withDeadlockRetry<T>(run: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await run();
    } catch (e) {
      if ((e as { code?: string }).code !== '40P01' || attempt >= 5) throw e;
    }
  }
}

const hasColumn = (table: string, column: string) => tableInfo(table).byName.has(column);

function byTable(catalog: PersonalCatalog): Map<string, PersonalColumn[]> {
  const out = new Map<string, PersonalColumn[]>();
  for (const c of catalog) out.set(c.table, [...(out.get(c.table) ?? []), c]);
  return out;
}

/** Parameters $2..$9 of every rewrite (PARAM_TYPES). */
function rewriteParams(
  hmac: PersonalHmac,
  names: { blocked: readonly string[]; hashed: readonly string[] },
  paths: { blocked: readonly string[]; hashed: readonly string[] },
  person: PersonIds = { serviceIds: [], employeeNumbers: [] },
): unknown[] {
  return [
    hmac.pads.inner,
    hmac.pads.outer,
    names.blocked,
    names.hashed,
    person.serviceIds,
    person.employeeNumbers,
    paths.blocked,
    paths.hashed,
  ];
}

function blockColumn(c: PersonalColumn, sets: string[], pending: string[]): void {
  for (const col of [c.column, ...c.companions]) {
    sets.push(`${q(col)} = null`);
    pending.push(`${q(col)} is not null`);
  }
}

function hashColumn(c: PersonalColumn, sets: string[], pending: string[], schema: string): void {
  sets.push(
    `${q(c.column)} = case when x.${q(c.column)} ~ ${HEX} then x.${q(c.column)} else "${schema}".personal_hmac(x.${q(c.column)}, $2, $3) end`,
  );
  pending.push(`${q(c.column)} !~ ${HEX}`);
}

/** `_extra` under the policy: the catalog's fields by name, the classified fields by path (`prefix`: the table's). */
const extraSql = (schema: string, column: string, prefix: string) =>
  `"${schema}".personal_fields("${schema}".personal_json(${column}, $4, $5, $2, $3), '${prefix.replace(/'/g, "''")}', $8, $9, $2, $3)`;

/** `_extra` and `_hash` of a table's rows once a policy other than keep applies to them. */
function bookkeeping(
  schema: string,
  table: string,
  prefix: string,
  u: { sets: string[]; pending: string[] },
  wrap: boolean,
): void {
  if (hasColumn(table, '_extra')) {
    u.sets.push(`_extra = ${extraSql(schema, 'x._extra', prefix)}`);
    u.pending.push(`_extra is distinct from ${extraSql(schema, '_extra', prefix)}`);
  }
  if (wrap && hasColumn(table, '_hash')) {
    u.sets.push(`_hash = ${wrappedContentHashSql('x._hash', '$2')}`);
    u.pending.push(`_hash not like 'p%'`);
  }
}

/** The catalog's names and the classified fields' paths a policy's actions name, by action. */
function namedBy(
  pd: PersonalData,
  actions: ReadonlyMap<string, string>,
  classes: ReadonlyMap<string, string>,
  action: string,
): { names: string[]; paths: string[] } {
  return {
    names: Object.keys(pd.names).filter((n) => actions.get(pd.names[n]!) === action),
    paths: [...classes.keys()].filter((p) => classes.get(p) !== 'not-personal' && actions.get(p) === action),
  };
}

/**
 * Rewrites a company's stored rows under its current policy (its own and the default's): blocked fields nulled,
 * hashed fields replaced by their HMAC, the same in `_extra` (of every table) and rejects' payloads, and the
 * content hash of the catalog's tables wrapped, as the row path does, so that the next sync finds the rows
 * unchanged. A field set back to keep is not restored: the service's next read of each record brings its value
 * back (as a new version).
 */
export async function rewriteUnderPolicy(
  wh: Warehouse,
  pd: PersonalData,
  companyKey: string,
  batch = REWRITE_BATCH,
): Promise<RewriteCounts> {
  const { actions, added } = await governedActions(wh, companyKey);
  if (actions.size === 0) return {};
  const hmac = personalHmac(wh.personalDataKey());
  const blocked = namedBy(pd, actions, added.classes, 'block');
  const hashed = namedBy(pd, actions, added.classes, 'hash');
  const params = [
    companyKey,
    ...rewriteParams(
      hmac,
      { blocked: blocked.names, hashed: hashed.names },
      { blocked: blocked.paths, hashed: hashed.paths },
    ),
  ];
  const counts: RewriteCounts = {};
  const catalogTables = byTable(pd.catalog);
  const prefixes = new Map(extraTables(Object.values(pd.targets)).map((e) => [e.table, e.prefix]));
  for (const table of new Set([...catalogTables.keys(), ...prefixes.keys()])) {
    const u = { sets: [] as string[], pending: [] as string[] };
    for (const c of catalogTables.get(table) ?? []) {
      const action = actions.get(c.field);
      if (action === 'block') blockColumn(c, u.sets, u.pending);
      else if (action === 'hash') hashColumn(c, u.sets, u.pending, wh.schema);
    }
    bookkeeping(wh.schema, table, prefixes.get(table) ?? '', u, catalogTables.has(table));
    if (u.sets.length > 0) counts[table] = await runBatches(wh, { table, ...u }, params, batch);
  }
  counts.sync_rejects = await runBatches(wh, rawUpdate(wh.schema, 'sync_rejects', 'raw'), params, batch);
  return counts;
}

function rawUpdate(schema: string, table: string, column: string, scope?: string): Update {
  return {
    table,
    sets: [`${q(column)} = ${extraSql(schema, `x.${q(column)}`, '')}`],
    pending: [`${q(column)} is distinct from ${extraSql(schema, q(column), '')}`],
    ...(scope ? { scope } : {}),
  };
}

/** One person by every id the warehouse holds for them: service ids, and employee numbers as stored. */
export interface PersonIds {
  serviceIds: number[];
  employeeNumbers: string[];
}

/** `$6` service ids, `$7` employee numbers: the rows of a table that name the person by these columns. */
function personMatch(person: PersonColumns, alias = ''): string | undefined {
  const parts = [
    person.serviceId ? `${alias}${q(person.serviceId)} = any($6::int[])` : undefined,
    person.employeeNumber ? `${alias}${q(person.employeeNumber)} = any($7::text[])` : undefined,
  ].filter(Boolean);
  return parts.length > 0 ? `(${parts.join(' or ')})` : undefined;
}

function scopeOf(schema: string, c: PersonalColumn): string | undefined {
  if (!c.parent) return personMatch(c.person);
  const match = personMatch(c.parent.person, 'p.');
  if (!match) return undefined;
  const on = c.parent.on.map(([child, parent]) => `p.${q(parent)} = ${q(c.table)}.${q(child)}`).join(' and ');
  return `exists (select 1 from ${q(schema)}.${q(c.parent.table)} p where p.company_key = ${q(c.table)}.company_key and ${on} and ${match})`;
}

/**
 * Blocks every personal field of one person in every table: the columns of rows that name them (their own rows,
 * every version, their name on others' rows and the answers they gave), with every personal field of those rows'
 * `_extra`, the raw payloads of rejects that name them and the payloads of changes pushed for them.
 */
export async function erasePerson(
  wh: Warehouse,
  pd: PersonalData,
  companyKey: string,
  person: PersonIds,
  batch = REWRITE_BATCH,
): Promise<RewriteCounts> {
  const hmac = personalHmac(wh.personalDataKey());
  // A patient's fields are nobody's here: no employee's erasure reaches them.
  const names = Object.keys(pd.names).filter((n) => pd.kinds[pd.names[n]!] !== 'patient');
  const { added } = await governedActions(wh, companyKey);
  const paths = [...added.classes].filter(([, c]) => c === 'personal').map(([p]) => p);
  const params = [
    companyKey,
    ...rewriteParams(hmac, { blocked: names, hashed: [] }, { blocked: paths, hashed: [] }, person),
  ];
  const prefixes = new Map(extraTables(Object.values(pd.targets)).map((e) => [e.table, e.prefix]));
  const counts: RewriteCounts = {};
  for (const [table, cols] of byTable(pd.catalog)) {
    const groups = new Map<string, PersonalColumn[]>();
    for (const c of cols) {
      const scope = scopeOf(wh.schema, c);
      if (scope) groups.set(scope, [...(groups.get(scope) ?? []), c]);
    }
    let n = 0;
    for (const [scope, group] of groups) {
      const u = { sets: [] as string[], pending: [] as string[] };
      for (const c of group) blockColumn(c, u.sets, u.pending);
      bookkeeping(wh.schema, table, prefixes.get(table) ?? '', u, true);
      n += await runBatches(wh, { table, ...u, scope }, params, batch);
    }
    counts[table] = n;
  }
  const idText = `array(select 'sid:' || s from unnest($6::int[]) s) || array(select 'en:' || e from unnest($7::text[]) e)`;
  const rejected = `jsonb_path_exists(raw, 'lax $.** ? (@.ServiceId == $sid[*] || @.EmployeeNumber == $en[*])', jsonb_build_object('sid', to_jsonb($6::int[]), 'en', to_jsonb($7::text[])), true)`;
  counts.sync_rejects = await runBatches(wh, rawUpdate(wh.schema, 'sync_rejects', 'raw', rejected), params, batch);
  counts.push_outbox = await runBatches(
    wh,
    rawUpdate(
      wh.schema,
      'push_outbox',
      'payload',
      `service_id = any($6::int[]) or entity_key = any(${idText}) or holder_key = any(${idText}) or payload->>'EmployeeNumber' = any($7::text[])`,
    ),
    params,
    batch,
  );
  return counts;
}
