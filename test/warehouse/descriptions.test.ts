import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INDIVIDUAL_STATUSES } from '../../src/source/schemas/individual.ts';
import { TIME_OFF_STATUSES } from '../../src/source/schemas/time-off.ts';
import { TOKEN_SCOPES } from '../../src/warehouse/api-tokens.ts';
import { AUDIT_OUTCOMES } from '../../src/warehouse/audit.ts';
import { openWarehouse, type Warehouse } from '../../src/warehouse/connection.ts';
import { PER_TABLE_NAMES, TABLE_COLUMN_DOCS } from '../../src/warehouse/descriptions.ts';
import { SESSION_ROLES } from '../../src/warehouse/sessions.ts';
import { RUN_OUTCOMES, STREAM_OUTCOMES } from '../../src/warehouse/tables/bookkeeping.ts';
import { FIELD_CLASSES, NEW_FIELD_MODES, PERSONAL_DATA_ACTIONS } from '../../src/warehouse/tables/personal-data.ts';
import { PUSH_KINDS, PUSH_MODEL_KINDS, PUSH_MODEL_OUTCOMES, PUSH_STATES } from '../../src/warehouse/tables/push.ts';
import { freshDatabase } from '../support/db.ts';

/** Columns holding one of a list of values our code (or the service, for its enumerations) writes. */
const ENUMERATED: Record<string, readonly string[]> = {
  'sync_runs.outcome': RUN_OUTCOMES,
  'resync_requests.outcome': STREAM_OUTCOMES,
  'push_model_runs.outcome': PUSH_MODEL_OUTCOMES,
  'push_outbox.status': PUSH_STATES,
  'push_outbox.kind': PUSH_KINDS,
  'push_models.kind': PUSH_MODEL_KINDS,
  'audit.outcome': AUDIT_OUTCOMES,
  'sessions.role': SESSION_ROLES,
  'api_tokens.scopes': TOKEN_SCOPES,
  'personal_data_policies.action': PERSONAL_DATA_ACTIONS,
  'field_classes.class': FIELD_CLASSES,
  'new_field_modes.mode': NEW_FIELD_MODES,
  'individuals.status': INDIVIDUAL_STATUSES,
  'individuals_history.status': INDIVIDUAL_STATUSES,
  'supervisors.status': INDIVIDUAL_STATUSES,
  'time_off_requests.status': TIME_OFF_STATUSES,
};

interface Comment {
  relation: string;
  kind: 'table' | 'view';
  column: string | null;
  doc: string | null;
}

let wh: Warehouse;

async function comments(): Promise<Comment[]> {
  return wh.sql<Comment[]>`
    select c.relname as relation, case c.relkind when 'v' then 'view' else 'table' end as kind, null as column,
      obj_description(c.oid, 'pg_class') as doc
    from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = ${wh.schema} and c.relkind in ('r', 'v', 'p')
    union all
    select c.relname, case c.relkind when 'v' then 'view' else 'table' end, a.attname, col_description(c.oid, a.attnum)
    from pg_class c join pg_namespace n on n.oid = c.relnamespace
    join pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
    where n.nspname = ${wh.schema} and c.relkind in ('r', 'v', 'p')`;
}

const docOf = (all: Comment[], key: string) => all.find((c) => `${c.relation}.${c.column}` === key)?.doc;

beforeAll(async () => {
  wh = await openWarehouse({ databaseUrl: await freshDatabase({ migrated: true }) });
  await wh.migrate();
}, 120_000);

afterAll(async () => {
  await wh?.close();
});

describe('the comments of a migrated warehouse', () => {
  it('describe every table, view and column', async () => {
    const missing = (await comments()).filter((c) => !c.doc).map((c) => `${c.relation}.${c.column ?? '(itself)'}`);
    expect(missing).toEqual([]);
  });

  it("describe a column whose name means something else per table by its table's own description", async () => {
    const columns = (await comments()).filter((c) => c.kind === 'table' && c.column && PER_TABLE_NAMES.has(c.column));
    expect(columns.length).toBeGreaterThan(PER_TABLE_NAMES.size);
    for (const c of columns) {
      const key = `${c.relation}.${c.column}`;
      expect(TABLE_COLUMN_DOCS[key], `${key} is described by its bare name`).toBeDefined();
      expect(c.doc?.startsWith(TABLE_COLUMN_DOCS[key]!), key).toBe(true);
    }
    // "run" is a sync run in one table and an EMS run in another.
    expect(docOf(await comments(), 'sync_rejects.run_id')).not.toBe(docOf(await comments(), 'form_audit.run_id'));
  });

  it('name every value an enumerated column holds', async () => {
    const all = await comments();
    for (const [key, values] of Object.entries(ENUMERATED)) {
      const doc = docOf(all, key);
      expect(doc, key).toBeTruthy();
      for (const v of values) expect(doc, `${key} names ${v}`).toMatch(new RegExp(`(^|[^\\w-])${v}([^\\w-]|$)`));
    }
  });

  it('follow the descriptions at every migrate: a stale comment is written again, without a migration', async () => {
    await wh.sql.unsafe(
      `comment on column "${wh.schema}"."sync_runs"."outcome" is 'Outcome of the run: ok or failed.'`,
    );
    await wh.sql.unsafe(`comment on table "${wh.schema}"."companies" is null`);
    await wh.migrate();
    const all = await comments();
    expect(docOf(all, 'sync_runs.outcome')).toMatch(/interrupted/);
    expect(all.find((c) => c.relation === 'companies' && c.column === null)?.doc).toMatch(
      /^The companies the sync serves/,
    );
  });
});
