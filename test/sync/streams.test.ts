import { describe, expect, it } from 'vitest';
import { endpoints, STREAM_NAMES, streams, envelopeTargets } from '../../src/resources/index.ts';
import { partitionsOf } from '../../src/sync/partitions.ts';
import { selectStreams, UnknownStreamError } from '../../src/sync/runner.ts';
import { jobs } from '../../jobs/index.ts';
import { pgSchema, getTableConfig, type PgTable } from 'drizzle-orm/pg-core';
import { DEFAULT_SCHEMA, warehouseTables } from '../../src/warehouse/schema.ts';
import { bookkeepingTables } from '../../src/warehouse/tables/bookkeeping.ts';
import { fencingTables } from '../../src/warehouse/tables/fencing.ts';
import { companyTables } from '../../src/warehouse/tables/companies.ts';
import { personalDataTables } from '../../src/warehouse/tables/personal-data.ts';
import { operatorTables } from '../../src/warehouse/tables/operators.ts';
import { pushModelTables, pushTables } from '../../src/warehouse/tables/push.ts';
import { accessTables } from '../../src/warehouse/tables/access.ts';
import type { Target } from '../../src/warehouse/targets.ts';

/** Lookups by key, existence checks and writes are not streams; every other read endpoint is. */
const NOT_STREAMS = new Set([
  'individualByServiceId',
  'individualByUniqueIdentifier',
  'individualByEmployeeNumber',
  'individualExists',
]);

describe('stream catalog', () => {
  it('covers every read endpoint of the spec', () => {
    const reads = Object.values(endpoints).filter((e) => e.method === 'GET' && !NOT_STREAMS.has(e.name));
    const covered = new Set(streams.map((s) => s.endpoint.name));
    expect(reads.filter((e) => !covered.has(e.name)).map((e) => e.name)).toEqual([]);
  });

  it('slices courses to at most the 31 days the service accepts, with statusOption 0', () => {
    const courses = streams.find((s) => s.name === 'individual-courses')!;
    expect(courses.strategy.kind).toBe('windowed');
    expect(courses.strategy.kind === 'windowed' && courses.strategy.sliceDays).toBeLessThanOrEqual(
      endpoints.individualCourses.maxRange!.days,
    );
    expect(courses.fixed).toEqual({ statusOption: 0 });
  });

  it('asks for deleted credentials so deletions arrive as IsDeleted', () => {
    expect(streams.find((s) => s.name === 'individual-certifications')!.fixed).toEqual({ IncludeDeleted: true });
  });

  it('sends only parameters each endpoint knows', () => {
    for (const s of streams) {
      const names = new Set(s.endpoint.query.map((q) => q.name));
      for (const k of Object.keys(s.fixed ?? {})) expect(names, `${s.name}: ${k}`).toContain(k);
      const st = s.strategy;
      if (st.kind === 'windowed' || st.kind === 'change-driven' || st.kind === 'status-driven') {
        expect(names).toContain(st.start);
        expect(names).toContain(st.end);
      }
      if (st.kind === 'change-driven') expect(names).toContain(st.openWhile.param);
      if (st.kind === 'status-driven') {
        expect(names).toContain(st.statusParam);
        const statuses = s.endpoint.query.find((q) => q.name === st.statusParam)?.values ?? [];
        expect(statuses).toEqual(expect.arrayContaining([st.open, ...st.decided]));
      }
      if (st.kind === 'updated-since' && st.followIndividuals) expect(names).toContain(st.followIndividuals.param);
      if (st.kind === 'updated-since') expect(names).toContain(st.param);
    }
  });

  it('names each stream of STREAM_NAMES once, in its order', () => {
    expect(streams.map((s) => s.name)).toEqual([...STREAM_NAMES]);
  });

  it('gives every append overlap and every periodic re-read its reason', () => {
    for (const s of streams) {
      const st = s.strategy;
      if (st.kind === 'windowed' && st.mode === 'append') expect(st.overlap?.reason, s.name).toBeTruthy();
      for (const r of 'rereads' in st ? (st.rereads ?? []) : [])
        expect(r.reason.length, `${s.name} ${r.name}`).toBeGreaterThan(20);
    }
  });

  it('partitions form responses by form id and run-log responses by run type and form type', () => {
    const ids = { formIds: [7, 9], runTypeIds: [3] };
    expect(partitionsOf(streams.find((s) => s.name === 'form-responses')!, ids).map((p) => p.query)).toEqual([
      { FormId: 7 },
      { FormId: 9 },
    ]);
    expect(partitionsOf(streams.find((s) => s.name === 'run-log-form-responses')!, ids).map((p) => p.query)).toEqual([
      { RunTypeId: 3, FormType: 'Debrief' },
      { RunTypeId: 3, FormType: 'Utilization' },
      { RunTypeId: 3, FormType: 'ChartReview' },
    ]);
  });

  it('selects named streams with what they depend on, and names an unknown one', () => {
    expect(selectStreams(['shift-assignments']).map((s) => s.name)).toEqual([
      'assignment-changes',
      'shift-assignments',
    ]);
    expect(() => selectStreams(['shifts'])).toThrow(UnknownStreamError);
    expect(() => selectStreams(['shifts'])).toThrow(/unknown stream "shifts"/);
  });

  it('schedules every stream in some job, each job naming real streams', () => {
    const scheduled = new Set(jobs.flatMap((j) => j.streams));
    expect(streams.filter((s) => !scheduled.has(s.name)).map((s) => s.name)).toEqual([]);
    for (const j of jobs) expect(() => selectStreams(j.streams)).not.toThrow();
  });
});

/** Table name → its columns, as the drizzle schema declares them. */
function declaredTables(tables: Record<string, unknown>): Map<string, Set<string>> {
  return new Map(
    Object.values(tables).map((t) => {
      const config = getTableConfig(t as PgTable);
      return [config.name, new Set(config.columns.map((c) => c.name))];
    }),
  );
}

/** Every table a target writes, with the key columns it names there. */
function writtenTables(target: Target): [string, readonly string[]][] {
  return [
    [target.table, ['company_key', ...target.key]],
    ...(target.history ? [[target.history, ['company_key', ...target.key]] as [string, string[]]] : []),
    ...(target.children ?? []).map((c): [string, readonly string[]] => [
      c.table,
      ['company_key', ...(c.parentColumns ?? target.key), ...c.key],
    ]),
  ];
}

describe('the catalog and the warehouse', () => {
  const tables = declaredTables(warehouseTables(DEFAULT_SCHEMA));
  const s = pgSchema(DEFAULT_SCHEMA);
  const ownTables = new Set([
    ...declaredTables(bookkeepingTables(s)).keys(),
    ...declaredTables(pushTables(s)).keys(),
    ...declaredTables(fencingTables(s)).keys(),
    ...declaredTables(companyTables(s)).keys(),
    ...declaredTables(personalDataTables(s)).keys(),
    ...declaredTables(accessTables(s)).keys(),
    ...declaredTables(pushModelTables(s)).keys(),
    ...declaredTables(operatorTables(s)).keys(),
  ]);
  const written = [...streams.map((st) => st.target), ...envelopeTargets].flatMap(writtenTables);

  it('writes only tables the drizzle schema declares, through columns they have', () => {
    const missing = written.flatMap(([table, key]) =>
      !tables.has(table)
        ? [`${table}: no such table`]
        : key.filter((c) => !tables.get(table)!.has(c)).map((c) => `${table}.${c}: no such column`),
    );
    expect(missing).toEqual([]);
  });

  it('has a stream writing every data table of the schema', () => {
    const writtenNames = new Set(written.map(([table]) => table));
    expect([...tables.keys()].filter((t) => !ownTables.has(t) && !writtenNames.has(t))).toEqual([]);
  });
});
