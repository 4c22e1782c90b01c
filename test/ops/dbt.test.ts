import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import AjvModule from '@redocly/ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { jobs } from '../../jobs/index.ts';
import { DBT_DOC_DIR, KEY_TEST, dataTables, warehouseDbtPackage } from '../../src/ops/dbt.ts';
import { streamSchedules } from '../../src/queue/schedules.ts';
import { syncedWarehouse, type SyncedWarehouse } from '../support/synced-warehouse.ts';

/**
 * The generated dbt package: its YAML is valid against dbt's published JSON schemas (dbt-labs/dbt-jsonschema,
 * vendored in test/fixtures/dbt-jsonschema), its sources cover every data table and view with freshness from the
 * job schedules, every model's SQL runs against a synced warehouse, every key test passes there, and docs/dbt/ is
 * what `npm run docs` generates.
 */

const SCHEMAS = fileURLToPath(new URL('../fixtures/dbt-jsonschema/', import.meta.url));
const schedule = { jobs, cronOverrides: {}, timezone: 'UTC' };

type Ajv = { compile(schema: object): ((data: unknown) => boolean) & { errors?: unknown } };
const AjvClass = ((AjvModule as unknown as { default?: unknown }).default ?? AjvModule) as new (o: object) => Ajv;
const ajv = new AjvClass({ strict: false, allErrors: true });
const validator = (file: string) => ajv.compile(JSON.parse(readFileSync(join(SCHEMAS, file), 'utf8')) as object);

interface SourceTable {
  name: string;
  loaded_at_field?: string;
  freshness: { warn_after: { count: number; period: string }; error_after: { count: number; period: string } } | null;
  data_tests?: Record<string, { columns: string[] }>[];
}

let w: SyncedWarehouse;
let files: Map<string, string>;
const sql = (text: string) => w.sync.warehouse.sql.unsafe(text);

beforeAll(async () => {
  w = await syncedWarehouse({ size: 'tiny' });
  files = await warehouseDbtPackage(w.sync.warehouse, schedule);
}, 120_000);

afterAll(async () => {
  await w?.close();
});

const yamlOf = (path: string) => parse(files.get(path)!) as Record<string, any>;
const sourceTables = () => yamlOf('models/staging/src_workforce.yml').sources[0].tables as SourceTable[];

/** source() and config() rendered as dbt would for this warehouse; any other Jinja is left, and fails the test. */
const rendered = (model: string) =>
  model
    .replace(/\{\{\s*config\([^)]*\)\s*\}\}/g, '')
    .replace(/\{\{\s*source\('workforce',\s*'([a-z_]+)'\)\s*\}\}/g, (_m, t: string) => `"workforce"."${t}"`);

describe('wfsync dbt', () => {
  it('writes property files and dbt_project.yml that dbt’s JSON schemas accept', () => {
    const properties = validator('dbt_yml_files-latest.json');
    for (const path of [...files.keys()].filter((p) => p.startsWith('models/') && p.endsWith('.yml'))) {
      expect(properties(yamlOf(path)), `${path}: ${JSON.stringify(properties.errors)}`).toBe(true);
    }
    const project = validator('dbt_project-latest.json');
    expect(project(yamlOf('dbt_project.yml')), JSON.stringify(project.errors)).toBe(true);
    expect(
      properties({
        version: 2,
        sources: [{ name: 'x', tables: [{ name: 't', freshness: { warn_after: { count: 1, period: 'fortnight' } } }] }],
      }),
    ).toBe(false);
  });

  it('covers every data table and every view, with freshness from the schedule of the stream that writes it', () => {
    const tables = sourceTables();
    const names = tables.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining([...dataTables().keys()]));
    expect(names).toEqual(
      expect.arrayContaining(['v_shifts_without_current_credential', 'v_headcount_daily', 'v_credential_compliance']),
    );
    for (const t of tables.filter((x) => x.loaded_at_field)) {
      expect(t.loaded_at_field).toBe('_synced_at');
      expect(t.freshness, t.name).not.toBeNull();
    }
    const minutes = streamSchedules(schedule).get('shift-assignments')!.intervalMs / 60_000;
    const shifts = tables.find((t) => t.name === 'shift_assignments')!;
    expect(shifts.freshness).toEqual({
      warn_after: { count: minutes * 1.5, period: 'minute' },
      error_after: { count: minutes * 2, period: 'minute' },
    });
  });

  it('tests each table’s key, and every key test passes on a synced warehouse', async () => {
    const keyed = sourceTables().filter((t) => !t.name.startsWith('v_'));
    const macro = files.get(`macros/test_${KEY_TEST}.sql`)!;
    const body = /\{% test [^%]+%\}([\s\S]*)\{% endtest %\}/.exec(macro)![1]!;
    for (const t of keyed) {
      const columns = t.data_tests?.[0]?.[KEY_TEST]?.columns;
      expect(columns, t.name).toContain('company_key');
      const query = body
        .replace(/\{\{ columns \| join\(', '\) \}\}/g, columns!.join(', '))
        .replace('{{ model }}', `"workforce"."${t.name}"`);
      expect(await sql(query), `${t.name} has duplicate keys`).toEqual([]);
    }
  });

  it('has one staging model per data table, each running against a synced warehouse and giving its current rows', async () => {
    const models = [...files.keys()].filter((p) => p.endsWith('.sql') && p.startsWith('models/'));
    expect(models.map((m) => /stg_workforce__([a-z_]+)\.sql$/.exec(m)![1]).sort()).toEqual(
      [...dataTables().keys()].sort(),
    );
    for (const path of models) {
      const model = rendered(files.get(path)!);
      expect(model, path).not.toMatch(/\{\{|\{%/);
      const table = /stg_workforce__([a-z_]+)\.sql$/.exec(path)![1]!;
      const [{ n }] = (await sql(`select count(*)::int as n from (${model}) m`)) as unknown as [{ n: number }];
      const live = model.includes('_deleted_at is null') ? ' where _deleted_at is null' : '';
      const [{ n: expected }] = (await sql(`select count(*)::int as n from workforce.${table}${live}`)) as unknown as [
        { n: number },
      ];
      expect(n, table).toBe(expected);
    }
    const [person] = await sql(`${rendered(files.get('models/staging/stg_workforce__individuals.sql')!)} limit 1`);
    expect(Object.keys(person!)).toEqual(
      expect.arrayContaining(['synced_at', 'extra_fields', 'is_exclude_from_verification_monitoring']),
    );
    expect(Object.keys(person!)).not.toContain('_deleted_at');
  });

  it('is what npm run docs wrote into docs/dbt/', () => {
    const committed = new Map<string, string>();
    const walk = (dir: string) => {
      for (const e of readdirSync(dir, { withFileTypes: true })) {
        const p = join(dir, e.name);
        if (e.isDirectory()) walk(p);
        else committed.set(relative(DBT_DOC_DIR, p), readFileSync(p, 'utf8'));
      }
    };
    walk(DBT_DOC_DIR);
    expect([...committed.keys()].sort(), 'docs/dbt drifted: run npm run docs').toEqual([...files.keys()].sort());
    for (const [path, text] of files)
      expect(committed.get(path), `docs/dbt/${path} drifted: run npm run docs`).toBe(text);
  });
});
