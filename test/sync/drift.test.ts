import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.ts';
import { endpoints, streamByName, type EndpointName } from '../../src/resources/index.ts';
import { runStreams, selectStreams } from '../../src/sync/runner.ts';
import { mapItem } from '../../src/warehouse/fingerprint.ts';
import type { Warehouse } from '../../src/warehouse/connection.ts';
import { keyText } from '../../src/warehouse/record-keys.ts';
import { divergence } from '../support/convergence.ts';
import { startProxy, type RunningProxy } from '../support/proxy.ts';
import { openTestSync, type TestSync } from '../support/sync-context.ts';

/**
 * Schema drift: the service adds fields we do not know, or sends records that break their schema.
 * A proxy between the client and the sandbox rewrites the JSON answers of chosen endpoints.
 */

type Rec = Record<string, unknown>;

const PATHS = {
  individuals: endpoints.individuals.path,
  shiftAssignments: endpoints.shiftAssignments.path,
  certifications: endpoints.individualCertifications.path,
  formResponses: endpoints.formResponses.path,
};

/** Tomorrow's service: a top-level field on everyone, a nested one on assignees, a new key in every form answer. */
function addFields(path: string, r: Rec): Rec {
  if (path === PATHS.individuals) return { ...r, NewField: 'tomorrow' };
  if (path === PATHS.shiftAssignments) {
    const out: Rec = { ...r, NewField: { Source: 'v3', Level: 2 } };
    if (r.Assignee) out.Assignee = { ...(r.Assignee as Rec), Nickname: `nick-${String(r.ShiftAssignmentId)}` };
    return out;
  }
  if (path === PATHS.formResponses && Array.isArray(r.Answers)) {
    return { ...r, Answers: (r.Answers as Rec[]).map((a) => ({ ...a, Confidence: 0.75 })) };
  }
  return r;
}

function rewriteItems(body: unknown, fn: (r: Rec) => Rec): unknown {
  if (Array.isArray(body)) return body.map((r) => fn(r as Rec));
  const envelope = body as Rec;
  return { ...envelope, Data: (envelope.Data as Rec[]).map(fn) };
}

let sandbox: RunningSandbox;
let proxy: RunningProxy;
const opened: TestSync[] = [];

async function open(): Promise<TestSync> {
  const t = await openTestSync(sandbox, { baseUrl: proxy.url });
  opened.push(t);
  return t;
}

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, seed: 3, size: 'tiny', rateLimit: null });
  proxy = await startProxy(sandbox.url);
});

afterAll(async () => {
  for (const t of opened) await t.close();
  await proxy?.close();
  await sandbox?.close();
});

/**
 * Rows of a stream's table as they should be when the service sends `rewrite(record)` for every record of the
 * truth: key → content hash, through the same mapper. Equal hashes mean equal columns, `_extra` and children.
 */
function expectedRows(stream: string, rewrite: (r: Rec) => Rec): Map<string, string> {
  const def = streamByName(stream)!;
  const target = def.target;
  const out = new Map<string, string>();
  const queries = def.partitions === 'formIds' ? sandbox.data.formIds().map((FormId) => ({ FormId })) : [{}];
  for (const q of queries) {
    for (const record of sandbox.data.truth(def.endpoint.name as EndpointName, q as never)) {
      const item = def.endpoint.item.parse(rewrite(record as Rec)) as Rec;
      const mapped = mapItem(target, 'acme', item, 'FormId' in q ? q : undefined);
      if (!mapped.deleted) out.set(mapped.keyText, String(mapped.row._hash));
    }
  }
  return out;
}

async function actualRows(wh: Warehouse, stream: string): Promise<Map<string, string>> {
  const target = streamByName(stream)!.target;
  const rows = await wh.sql.unsafe(
    `select * from "${wh.schema}"."${target.table}" where company_key = 'acme' and _deleted_at is null`,
  );
  return new Map(rows.map((r) => [keyText(r, target.key), String(r._hash)]));
}

describe('fields the service adds tomorrow', () => {
  let t: TestSync;

  beforeAll(async () => {
    proxy.setHooks({
      rewrite: (url, body) =>
        Object.values(PATHS).includes(url.pathname) ? rewriteItems(body, (r) => addFields(url.pathname, r)) : undefined,
    });
    t = await open();
  });

  it('are kept in _extra, top level and nested, and nothing is rejected', async () => {
    const summary = await runStreams(t.ctx, selectStreams(['individuals', 'shift-assignments', 'form-responses']));
    expect(summary.streams.map((s) => [s.stream, s.outcome])).toEqual(summary.streams.map((s) => [s.stream, 'ok']));
    expect(summary.rejects).toBe(0);
    const sql = t.warehouse.sql;
    const schema = sql(t.warehouse.schema);
    expect((await sql`select count(*)::int as n from ${schema}.sync_rejects`)[0]!.n).toBe(0);

    const individuals = await sql`select service_id, _extra from ${schema}.individuals where company_key = 'acme'`;
    expect(individuals.length).toBe(sandbox.data.truth('individuals').length);
    for (const r of individuals) expect(r._extra).toMatchObject({ NewField: 'tomorrow' });

    const assignments =
      await sql`select shift_assignment_id, assignee_service_id, _extra from ${schema}.shift_assignments where company_key = 'acme'`;
    expect(assignments.length).toBe(sandbox.data.truth('shiftAssignments').length);
    const assigned = new Set(
      (sandbox.data.truth('shiftAssignments') as Rec[])
        .filter((a) => a.Assignee)
        .map((a) => String(a.ShiftAssignmentId)),
    );
    expect(assigned.size).toBeGreaterThan(0);
    for (const r of assignments) {
      const expected: Rec = { NewField: { Source: 'v3', Level: 2 } };
      if (assigned.has(String(r.shift_assignment_id)))
        expected.Assignee = { Nickname: `nick-${r.shift_assignment_id}` };
      expect(r._extra).toEqual(expected);
    }

    const answers =
      await sql`select response_id, question_id, _extra from ${schema}.form_response_answers where company_key = 'acme'`;
    expect(answers.length).toBeGreaterThan(10);
    for (const r of answers) expect(r._extra).toMatchObject({ Confidence: 0.75 });
  });

  it('leave every known column as the service sent it: the rows equal the truth with the new fields, row for row', async () => {
    for (const [stream, path] of [
      ['individuals', PATHS.individuals],
      ['shift-assignments', PATHS.shiftAssignments],
      ['form-responses', PATHS.formResponses],
    ] as const) {
      const expected = expectedRows(stream, (r) => addFields(path, r));
      expect(expected.size, stream).toBeGreaterThan(0);
      expect(await actualRows(t.warehouse, stream), stream).toEqual(expected);
    }
  });
});

describe('records that break their schema', () => {
  let t: TestSync;
  /** What the proxy sent in place of each broken record, by what was broken. */
  const sent = new Map<string, Rec>();
  let badId: number;
  let badDate: number;
  let noId: number;

  beforeAll(async () => {
    const assignments = sandbox.data.truth('shiftAssignments') as Rec[];
    // Away from 12:00 UTC, where a window edge might fall and the record be read twice.
    const awayFromEdges = assignments.filter((a) => new Date(String(a.StartDateTime)).getUTCHours() !== 12);
    badId = awayFromEdges[3]!.ShiftAssignmentId as number;
    badDate = awayFromEdges[40]!.ShiftAssignmentId as number;
    const certs = sandbox.data.truth('individualCertifications') as Rec[];
    noId = certs.find((c) => c.IsDeleted === false)!.IndividualCertificationId as number;

    const breakRecord = (path: string, r: Rec): Rec => {
      let out = r;
      if (path === PATHS.shiftAssignments && r.ShiftAssignmentId === badId) out = { ...r, ShiftAssignmentId: 'abc' };
      else if (path === PATHS.shiftAssignments && r.ShiftAssignmentId === badDate)
        out = { ...r, StartDateTime: 'not a date' };
      else if (path === PATHS.certifications && r.IndividualCertificationId === noId) {
        const { IndividualCertificationId: _, ...rest } = r;
        out = rest;
      } else return r;
      sent.set(path === PATHS.certifications ? 'noId' : out.ShiftAssignmentId === 'abc' ? 'badId' : 'badDate', out);
      return out;
    };
    proxy.setHooks({
      rewrite: (url, body) =>
        url.pathname === PATHS.shiftAssignments || url.pathname === PATHS.certifications
          ? rewriteItems(body, (r) => breakRecord(url.pathname, r))
          : undefined,
    });
    t = await open();
  });

  it('go to sync_rejects with their raw payload and a reason naming the field; the streams complete', async () => {
    const summary = await runStreams(t.ctx, selectStreams(['shift-assignments', 'individual-certifications']));
    expect(summary.streams.map((s) => [s.stream, s.outcome])).toEqual(summary.streams.map((s) => [s.stream, 'ok']));
    expect(Object.fromEntries(summary.streams.map((s) => [s.stream, s.rejects]))).toEqual({
      individuals: 0,
      'individual-certifications': 1,
      'assignment-changes': 0,
      'shift-assignments': 2,
    });
    expect([...sent.keys()].sort()).toEqual(['badDate', 'badId', 'noId']);

    const sql = t.warehouse.sql;
    const rejects = await sql<{ stream: string; raw: Rec; reason: string; run_id: number }[]>`
      select stream, raw, reason, run_id from ${sql(t.warehouse.schema)}.sync_rejects where company_key = 'acme' order by id`;
    const byStream = (s: string) => rejects.filter((r) => r.stream === s);

    const assignmentRejects = byStream('shift-assignments');
    expect(assignmentRejects.map((r) => r.raw)).toEqual(
      expect.arrayContaining([sent.get('badId'), sent.get('badDate')]),
    );
    expect(assignmentRejects).toHaveLength(2);
    expect(assignmentRejects.find((r) => r.raw.ShiftAssignmentId === 'abc')!.reason).toMatch(/^ShiftAssignmentId: /);
    expect(assignmentRejects.find((r) => r.raw.StartDateTime === 'not a date')!.reason).toMatch(/^StartDateTime: /);

    const certRejects = byStream('individual-certifications');
    expect(certRejects).toHaveLength(1);
    expect(certRejects[0]!.raw).toEqual(sent.get('noId'));
    expect(certRejects[0]!.raw).not.toHaveProperty('IndividualCertificationId');
    expect(certRejects[0]!.raw).toHaveProperty('ServiceId');
    expect(certRejects[0]!.reason).toMatch(/IndividualCertificationId/);
  });

  it('every other record of the pages is written, and sync_runs counts the rejects of each run', async () => {
    const d = await divergence(t.warehouse, sandbox.data, 'acme');
    expect(d['shift-assignments']).toMatchObject({ extra: [], stale: [] });
    expect([...d['shift-assignments']!.missing].sort()).toEqual(
      [JSON.stringify([String(badId)]), JSON.stringify([String(badDate)])].sort(),
    );
    expect(d['shift-assignments']!.expected).toBeGreaterThan(500);
    expect(d['individual-certifications']).toMatchObject({
      missing: [JSON.stringify([String(noId)])],
      extra: [],
      stale: [],
    });
    expect(d['individual-certifications']!.expected).toBeGreaterThan(100);

    const sql = t.warehouse.sql;
    const schema = sql(t.warehouse.schema);
    const runs = await sql<{ id: number; stream: string; outcome: string; rejects: number; counted: number }[]>`
      select r.id, r.stream, r.outcome, r.rejects,
             (select count(*)::int from ${schema}.sync_rejects j where j.run_id = r.id) as counted
      from ${schema}.sync_runs r where r.company_key = 'acme' order by r.stream`;
    expect(runs.map((r) => [r.stream, r.outcome, r.rejects, r.counted])).toEqual([
      ['assignment-changes', 'ok', 0, 0],
      ['individual-certifications', 'ok', 1, 1],
      ['individuals', 'ok', 0, 0],
      ['shift-assignments', 'ok', 2, 2],
    ]);
  });
});
