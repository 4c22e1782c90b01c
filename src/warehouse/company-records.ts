import { getTableConfig, type PgTable } from 'drizzle-orm/pg-core';
import { DEFAULTS, formatRateLimit, parseRateLimit, type RateLimit } from '../config.ts';
import type { Sealer } from './secret.ts';
import type { Warehouse } from './connection.ts';
import { recordEvent, recordEvents, type NewEvent } from './events.ts';
import { inBatches, PRUNE_BATCH } from './retention.ts';
import { tableInfo } from './catalog.ts';

/**
 * The `companies` table: the companies the sync serves, added and changed by an operator (`wfsync companies`,
 * the ops server) or mirrored from the environment (WFS_COMPANIES / WFS_API_KEY). The API key goes in sealed and
 * comes out in clear only through `readCompaniesWithKeys`, for the process that builds a client with it.
 */

export type ManagedBy = 'environment' | 'operator';

/** A company as anyone may see it: everything but its API key. */
export interface CompanyRecord {
  key: string;
  baseUrl: string;
  formIds: number[];
  runTypeIds: number[];
  rateLimit: RateLimit;
  paused: boolean;
  /** Streams the company does not want in the warehouse: not scheduled, not read. */
  streamsOff: string[];
  managedBy: ManagedBy;
  createdAt: Date;
  updatedAt: Date;
}

/**
 * A company with its API key in clear: only for building its client. `apiKey` is undefined when this process
 * cannot open it (it was sealed under another WFS_SECRET_KEY).
 */
export interface CompanyWithKey extends CompanyRecord {
  apiKey: string | undefined;
}

export type CompanyErrorKind =
  | 'unknown_company'
  | 'already_added'
  | 'managed_by_environment'
  | 'invalid'
  | 'key_refused'
  | 'service_unreachable'
  | 'stream_depended_on'
  | 'dependency_off'
  | 'stream_off';

/** A change to the companies the table refuses, in one line naming the company and what to do. */
export class CompanyError extends Error {
  override readonly name = 'CompanyError';
  constructor(
    readonly kind: CompanyErrorKind,
    message: string,
  ) {
    super(message);
  }
}

export const COMPANY_KEY = /^[a-z0-9_-]{1,40}$/i;

/** What `add` is given; the API key is sealed before it reaches the table. */
export interface NewCompany {
  key: string;
  baseUrl: string;
  apiKey: string;
  formIds?: number[];
  runTypeIds?: number[];
  rateLimit?: RateLimit;
}

interface CompanyRow {
  company_key: string;
  base_url: string;
  api_key_sealed: string;
  form_ids: number[];
  run_type_ids: number[];
  rate_limit: string;
  paused: boolean;
  streams_off: string[];
  managed_by: ManagedBy;
  created_at: Date;
  updated_at: Date;
}

const table = (wh: Warehouse) => wh.sql`${wh.sql(wh.schema)}.companies`;

function record(row: CompanyRow): CompanyRecord {
  return {
    key: row.company_key,
    baseUrl: row.base_url,
    formIds: row.form_ids.map(Number),
    runTypeIds: row.run_type_ids.map(Number),
    rateLimit: parseRateLimit(row.rate_limit),
    paused: row.paused,
    streamsOff: row.streams_off,
    managedBy: row.managed_by,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

function checkKey(key: string): void {
  if (!COMPANY_KEY.test(key))
    throw new CompanyError('invalid', `company key "${key.slice(0, 60)}": letters, digits, - or _, at most 40`);
}

/** Every company, by key, without API keys. */
export async function listCompanies(wh: Warehouse): Promise<CompanyRecord[]> {
  const rows = await wh.sql<CompanyRow[]>`select * from ${table(wh)} order by company_key`;
  return rows.map(record);
}

export async function findCompany(wh: Warehouse, key: string): Promise<CompanyRecord | undefined> {
  const [row] = await wh.sql<CompanyRow[]>`select * from ${table(wh)} where company_key = ${key}`;
  return row && record(row);
}

/** Every company with its API key opened: for the registry that builds the clients, and nothing else. */
export async function readCompaniesWithKeys(wh: Warehouse, sealer: Sealer): Promise<CompanyWithKey[]> {
  const rows = await wh.sql<CompanyRow[]>`select * from ${table(wh)} order by company_key`;
  return rows.map((row) => ({ ...record(row), apiKey: safeOpen(sealer, row.api_key_sealed) }));
}

/** Adds a company an operator manages; refused when the key is taken. */
export async function addCompany(wh: Warehouse, sealer: Sealer, c: NewCompany): Promise<CompanyRecord> {
  checkKey(c.key);
  if (!c.apiKey) throw new CompanyError('invalid', 'the API key is empty');
  const rows = await wh.sql<CompanyRow[]>`
    insert into ${table(wh)} (company_key, base_url, api_key_sealed, form_ids, run_type_ids, rate_limit, managed_by)
    values (${c.key}, ${c.baseUrl}, ${sealer.seal(c.apiKey)}, ${c.formIds ?? []}, ${c.runTypeIds ?? []},
            ${formatRateLimit(c.rateLimit ?? DEFAULTS.rateLimit)}, 'operator')
    on conflict (company_key) do nothing
    returning *`;
  if (!rows[0]) throw new CompanyError('already_added', `company ${c.key} is already added (wfsync companies list)`);
  await recordEvent(wh, { companyKey: c.key, event: 'company_added', detail: { baseUrl: c.baseUrl } });
  return record(rows[0]);
}

/** The operator's company `key`, for a change: refused when it is unknown or the environment manages it. */
async function operatorCompany(wh: Warehouse, key: string, change: string): Promise<CompanyRecord> {
  checkKey(key);
  const found = await findCompany(wh, key);
  if (!found) throw new CompanyError('unknown_company', `company ${key} is not added (wfsync companies list)`);
  if (found.managedBy === 'environment') {
    throw new CompanyError(
      'managed_by_environment',
      `company ${key} is managed by the environment (WFS_COMPANIES or WFS_API_KEY): ${change} it there`,
    );
  }
  return found;
}

async function update(wh: Warehouse, key: string, set: Record<string, unknown>): Promise<CompanyRecord> {
  const [row] = await wh.sql<CompanyRow[]>`
    update ${table(wh)} set ${wh.sql(set)}, updated_at = now() where company_key = ${key} and managed_by = 'operator' returning *`;
  if (!row) throw new CompanyError('unknown_company', `company ${key} is not added (wfsync companies list)`);
  return record(row);
}

/** Pauses or resumes a company: running processes see it at their next refresh. */
export async function setPaused(wh: Warehouse, key: string, paused: boolean): Promise<CompanyRecord> {
  const was = await operatorCompany(wh, key, paused ? 'pause' : 'resume');
  const changed = await update(wh, key, { paused });
  if (was.paused !== paused)
    await recordEvent(wh, { companyKey: key, event: paused ? 'company_paused' : 'company_resumed' });
  return changed;
}

/** Replaces a company's API key: running clients send the new one from their next request after the refresh. */
export async function rotateKey(wh: Warehouse, sealer: Sealer, key: string, apiKey: string): Promise<CompanyRecord> {
  if (!apiKey) throw new CompanyError('invalid', 'the API key is empty');
  await operatorCompany(wh, key, 'rotate the key of');
  const rotated = await update(wh, key, { api_key_sealed: sealer.seal(apiKey) });
  await recordEvent(wh, { companyKey: key, event: 'key_rotated' });
  return rotated;
}

/** Tables a purge leaves: the company row goes last, and the audit outlives it (who removed and purged it). */
const NOT_PURGED = ['companies', 'audit'];

/**
 * The tables holding a company's rows: every table the schema declares with a `company_key` column, but the
 * companies table itself and the audit. Derived from the schema, so a table added later is purged too.
 */
export function companyRowTables(wh: Warehouse): string[] {
  return Object.values(wh.tables as Record<string, PgTable>)
    .map((t) => getTableConfig(t))
    .filter((cfg) => !NOT_PURGED.includes(cfg.name) && cfg.columns.some((c) => c.name === 'company_key'))
    .map((cfg) => cfg.name);
}

/** Rows of the company deleted, per table. */
export type Purged = Record<string, number>;

/**
 * Deletes every row of the company from every table, in batches (each statement its own transaction, so a large
 * company holds its locks briefly); the company itself stays.
 */
export async function purgeCompanyRows(wh: Warehouse, key: string, size = PRUNE_BATCH): Promise<Purged> {
  checkKey(key);
  const purged: Purged = {};
  for (const name of companyRowTables(wh)) {
    const t = wh.sql`${wh.sql(wh.schema)}.${wh.sql(name)}`;
    // By key, the company's first: on Citus the statement then runs on the company's shard alone.
    const k = wh.sql(tableInfo(name).primaryKey as string[]);
    purged[name] = await inBatches(async (limit) => {
      const done = await wh.sql`
        delete from ${t} where company_key = ${key} and (${k}) in (select ${k} from ${t} where company_key = ${key} limit ${limit})`;
      return done.count;
    }, size);
  }
  return purged;
}

/**
 * Removes an operator's company: its runs stop at the next refresh. With `purge`, its rows go from every table
 * first (the company row last, so a purge cut short can be run again).
 */
export async function removeCompany(
  wh: Warehouse,
  key: string,
  o: { purge?: boolean; batchSize?: number } = {},
): Promise<{ removed: CompanyRecord; purged?: Purged }> {
  const found = await operatorCompany(wh, key, 'remove');
  const purged = o.purge ? await purgeCompanyRows(wh, key, o.batchSize) : undefined;
  await wh.sql`delete from ${table(wh)} where company_key = ${key} and managed_by = 'operator'`;
  // A purge leaves no row of the company, its timeline included.
  if (!purged) await recordEvent(wh, { companyKey: key, event: 'company_removed' });
  return { removed: found, purged };
}

/**
 * Mirrors the environment's companies into the table, marked as managed by it: a new one is added, a known one
 * takes the environment's settings (an operator's company of the same key becomes the environment's), and one
 * the environment no longer names leaves the table (its rows stay). Paused stays as it was.
 */
export async function mirrorEnvironmentCompanies(
  wh: Warehouse,
  sealer: Sealer,
  companies: readonly NewCompany[],
): Promise<void> {
  const events: NewEvent[] = [];
  await wh.sql.begin(async (sql) => {
    const t = sql`${sql(wh.schema)}.companies`;
    for (const c of companies) {
      const sealed = sealer.seal(c.apiKey);
      const rate = formatRateLimit(c.rateLimit ?? DEFAULTS.rateLimit);
      // The sealed key differs on every seal: it is rewritten only when the key itself changed.
      const [known] = await sql<CompanyRow[]>`select * from ${t} where company_key = ${c.key} for update`;
      const sameKey = known ? safeOpen(sealer, known.api_key_sealed) === c.apiKey : false;
      if (!known)
        events.push({
          companyKey: c.key,
          event: 'company_added',
          detail: { baseUrl: c.baseUrl, managedBy: 'environment' },
        });
      else if (!sameKey) events.push({ companyKey: c.key, event: 'key_rotated', detail: { managedBy: 'environment' } });
      await sql`
        insert into ${t} (company_key, base_url, api_key_sealed, form_ids, run_type_ids, rate_limit, managed_by)
        values (${c.key}, ${c.baseUrl}, ${sealed}, ${c.formIds ?? []}, ${c.runTypeIds ?? []}, ${rate}, 'environment')
        on conflict (company_key) do update set
          base_url = excluded.base_url,
          api_key_sealed = ${sameKey ? sql`${t}.api_key_sealed` : sql`excluded.api_key_sealed`},
          form_ids = excluded.form_ids, run_type_ids = excluded.run_type_ids, rate_limit = excluded.rate_limit,
          managed_by = 'environment', updated_at = excluded.updated_at`;
    }
    const keys = companies.map((c) => c.key);
    const gone = await sql<{ key: string }[]>`
      delete from ${t} where managed_by = 'environment' and company_key <> all(${keys}) returning company_key as key`;
    for (const g of gone)
      events.push({ companyKey: g.key, event: 'company_removed', detail: { managedBy: 'environment' } });
  });
  await recordEvents(wh, events);
}

/** A key sealed under another secret (WFS_SECRET_KEY changed) cannot be opened: it counts as different. */
function safeOpen(sealer: Sealer, sealed: string): string | undefined {
  try {
    return sealer.open(sealed);
  } catch {
    return undefined;
  }
}
