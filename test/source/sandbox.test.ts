import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRateLimiter } from '../../src/ratelimit/index.ts';
import type { RateLimiter } from '../../src/ratelimit/types.ts';
import { lowerCaseParams, parseQuery } from '../../src/sandbox/http-query.ts';
import { startSandbox, type RunningSandbox, type SandboxOptions } from '../../src/sandbox/index.ts';
import { SourceClient, type SourceClientOptions } from '../../src/source/client.ts';
import type { Endpoint } from '../../src/source/endpoints.ts';
import { endpoints, type EndpointName } from '../../src/resources/index.ts';
import { SourceError } from '../../src/source/errors.ts';
import { buildQuery } from '../../src/source/query.ts';
import { RUN_LOG_FORM_TYPES } from '../../src/source/schemas/forms.ts';
import { capturingLogger, RecordingLimiter } from './helpers.ts';

/**
 * The client against the sandbox over HTTP: every endpoint, paging, filters, errors, and faults.
 * The sandbox's fault draws are seeded, so a fault sequence is the same on every run.
 */

const DAY = 86_400_000;
const fast = { baseMs: 5, capMs: 50 };
const roomy = { limit: 100_000, periodMs: 1000 };

function client(sb: RunningSandbox, opts: Partial<SourceClientOptions> = {}): SourceClient {
  return new SourceClient({
    baseUrl: sb.url,
    apiKey: sb.apiKey,
    limiter: createRateLimiter({ rateLimit: roomy }),
    backoff: fast,
    logger: capturingLogger().logger,
    ...opts,
  });
}

async function failure(p: Promise<unknown>): Promise<SourceError> {
  const e = await p.then(
    () => new Error('expected a failure'),
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(SourceError);
  return e as SourceError;
}

/** What the sandbox holds for a query, read through the same parsing its HTTP layer applies to ours. */
function truth(sb: RunningSandbox, e: Endpoint, query: Record<string, unknown>): readonly object[] {
  const parsed = parseQuery(e, lowerCaseParams(new URLSearchParams(buildQuery(e, query))), false);
  if (!parsed.ok) throw new Error(parsed.bad.message);
  return sb.data.truth(e.name as EndpointName, parsed.query);
}

/** `[start, end)` slices of at most `days` days covering `from`..`to`. */
function slices(from: number, to: number, days: number): [Date, Date][] {
  const out: [Date, Date][] = [];
  for (let t = from; t < to; t += days * DAY) out.push([new Date(t), new Date(Math.min(to, t + days * DAY))]);
  return out;
}

/** Every list query that together covers all of a sandbox's data, by endpoint. */
function everyQuery(sb: RunningSandbox): [Endpoint, Record<string, unknown>][] {
  const now = sb.data.now().getTime();
  const from = new Date(now - 400 * DAY);
  const to = new Date(now + 60 * DAY);
  const e = endpoints;
  const window = { StartDate: from, EndDate: to };
  const queries: [Endpoint, Record<string, unknown>][] = [
    [e.individuals, {}],
    [e.supervisors, {}],
    [e.individualCertifications, { IncludeDeleted: true }],
    [e.pendingCertifications, {}],
    [e.requiredCertificationStatus, {}],
    [e.shiftAssignments, window],
    [e.assignmentChanges, window],
    [e.schedules, {}],
    [e.timeOffRequests, { StartDateTime: from, EndDateTime: to }],
    [e.runLogForms, {}],
    [e.formAudit, window],
    [e.certifications, {}],
    [e.workStatuses, {}],
    [e.departments, {}],
    [e.workShifts, {}],
    [e.jobTitles, {}],
    [e.locales, {}],
  ];
  for (const [start, end] of slices(from.getTime(), to.getTime(), 31)) {
    queries.push([e.individualCourses, { startDate: start, endDate: end, statusOption: 0 }]);
  }
  for (const FormId of sb.data.formIds()) {
    queries.push([e.formResponses, { FormId, StartDate: from, EndDate: to }]);
  }
  for (const RunTypeId of sb.data.runTypeIds()) {
    for (const FormType of RUN_LOG_FORM_TYPES)
      queries.push([e.runLogFormResponses, { RunTypeId, FormType, ...window }]);
  }
  return queries;
}

describe('a small sandbox', () => {
  let sb: RunningSandbox;
  let c: SourceClient;

  beforeAll(async () => {
    sb = await startSandbox({
      port: 0,
      seed: 11,
      size: 'small',
      rateLimit: null,
      keys: [
        { key: 'full-key', scopes: ['individuals', 'certifications'] },
        { key: 'certs-only', scopes: ['certifications'] },
      ],
    });
    c = client(sb);
  });

  afterAll(async () => {
    await c?.close();
    await sb?.close();
  });

  it('serves every record of every list endpoint, and every one parses with zero rejects', async () => {
    const counts: Partial<Record<EndpointName, number>> = {};
    for (const [e, query] of everyQuery(sb)) {
      const all = await c.all(e, query as never);
      expect(all.rejects, `${e.name} ${JSON.stringify(query)}`).toEqual([]);
      expect(all.items.length, `${e.name} ${JSON.stringify(query)}`).toBe(truth(sb, e, query).length);
      counts[e.name as EndpointName] = (counts[e.name as EndpointName] ?? 0) + all.items.length;
    }
    // Every endpoint had something to parse, so "zero rejects" covered real records.
    for (const [name, n] of Object.entries(counts)) expect(n, name).toBeGreaterThan(0);
  });

  it('pages with exactly one request per page, stopping on HasMoreResults false', async () => {
    const now = sb.data.now().getTime();
    const query = { StartDate: new Date(now - 20 * DAY), EndDate: new Date(now + 5 * DAY) };
    const n = truth(sb, endpoints.shiftAssignments, query).length;
    expect(n).toBeGreaterThan(450);
    for (const size of [200, 150, 37]) {
      const before = c.stats().requests;
      const served = sb.stats().requests;
      const offsets: number[] = [];
      let items = 0;
      for await (const page of c.pages(endpoints.shiftAssignments, query, { pageSize: size })) {
        offsets.push(page.offset);
        items += page.items.length;
      }
      const pages = Math.ceil(n / size);
      expect(items).toBe(n);
      expect(offsets).toEqual(Array.from({ length: pages }, (_, i) => i * size));
      expect(c.stats().requests - before).toBe(pages);
      expect(sb.stats().requests - served).toBe(pages);
    }
  });

  it('stops after one request when the whole result fits one page exactly', async () => {
    const n = truth(sb, endpoints.pendingCertifications, {}).length;
    expect(n).toBeGreaterThan(0);
    const before = sb.stats().requests;
    const all = await c.all(endpoints.pendingCertifications, {}, { pageSize: Math.min(n, 200) });
    expect(all.items).toHaveLength(n);
    expect(sb.stats().requests - before).toBe(Math.ceil(n / Math.min(n, 200)));
  });

  it('applies filters as the service does', async () => {
    const now = sb.data.now().getTime();
    const range = { StartDate: new Date(now - 10 * DAY), EndDate: new Date(now + 3 * DAY) };
    const open = await c.all(endpoints.shiftAssignments, { ...range, OnlyOpenShifts: true });
    expect(open.items.length).toBeGreaterThan(0);
    expect(open.items.every((a) => a.Assignee === null || a.Assignee === undefined)).toBe(true);
    const clockedIn = await c.all(endpoints.shiftAssignments, { ...range, OnlyClockedInShifts: true });
    expect(clockedIn.items.every((a) => a.ClockInDateTime && !a.ClockOutDateTime)).toBe(true);
    const rides = await c.all(endpoints.shiftAssignments, { ...range, OnlyRideAlong: true });
    expect(rides.items.every((a) => a.Type === 'Ride Along')).toBe(true);

    const current = await c.all(endpoints.individuals, { ExcludeStatuses: ['Former', 'LOA'] });
    expect(current.items.length).toBeGreaterThan(0);
    expect(current.items.every((i) => i.Status === 'Active')).toBe(true);

    const someone = current.items[0]!;
    const theirs = await c.all(endpoints.individualCertifications, { ServiceId: someone.ServiceId });
    expect(theirs.items.every((x) => x.ServiceId === someone.ServiceId)).toBe(true);

    const from = new Date(now - 90 * DAY);
    const approved = await c.all(endpoints.timeOffRequests, {
      StartDateTime: from,
      EndDateTime: new Date(now + 30 * DAY),
      RequestStatus: ['Approved'],
    });
    expect(approved.items.length).toBeGreaterThan(0);
    expect(approved.items.every((r) => r.Status === 'Approved')).toBe(true);
  });

  it('sends a + offset so the service reads the instant meant', async () => {
    const now = sb.data.now().getTime();
    // The same instants written with a +05:30 offset and in UTC must select the same assignments.
    const local = (t: number) => `${new Date(t + 5.5 * 3_600_000).toISOString().slice(0, 19)}+05:30`;
    const start = now - 3 * DAY;
    const end = now;
    const plus = await c.all(endpoints.shiftAssignments, { StartDate: local(start), EndDate: local(end) });
    const utc = await c.all(endpoints.shiftAssignments, { StartDate: new Date(start), EndDate: new Date(end) });
    expect(plus.items.length).toBeGreaterThan(0);
    expect(plus.items.map((a) => a.ShiftAssignmentId)).toEqual(utc.items.map((a) => a.ShiftAssignmentId));
  });

  it('passes the form extras through', async () => {
    const FormId = sb.data.formIds()[0]!;
    const now = sb.data.now().getTime();
    const [page] = await (async () => {
      const out = [];
      for await (const p of c.pages(endpoints.formResponses, {
        FormId,
        StartDate: new Date(now - 200 * DAY),
        EndDate: new Date(now),
      }))
        out.push(p);
      return out;
    })();
    expect(page!.extras).toMatchObject({ FormId });
    expect(typeof page!.extras.FormTitle).toBe('string');
  });

  it('looks individuals up by each key, with found:false for one that does not exist', async () => {
    const [person] = (await c.all(endpoints.individuals, { ExcludeStatuses: 'Former' })).items;
    expect(person).toBeDefined();
    const byId = await c.lookup(endpoints.individualByServiceId, { serviceId: person!.ServiceId });
    expect(byId).toMatchObject({ found: true, item: { ServiceId: person!.ServiceId } });
    if (person!.UniqueNumber) {
      expect(
        (await c.lookup(endpoints.individualByUniqueIdentifier, { uniqueIdentifier: person!.UniqueNumber })).found,
      ).toBe(true);
      expect(await c.lookup(endpoints.individualExists, { uniqueIdentifier: person!.UniqueNumber })).toEqual({
        found: true,
        item: true,
      });
    }
    if (person!.EmployeeNumber) {
      expect(
        (await c.lookup(endpoints.individualByEmployeeNumber, { employeeNumber: person!.EmployeeNumber })).found,
      ).toBe(true);
    }
    expect(await c.lookup(endpoints.individualByServiceId, { serviceId: 987_654_321 })).toEqual({ found: false });
    expect(await c.lookup(endpoints.individualByEmployeeNumber, { employeeNumber: 'NO-SUCH-NUMBER' })).toEqual({
      found: false,
    });
    expect(await c.lookup(endpoints.individualExists, { uniqueIdentifier: 'NO-SUCH-ID' })).toEqual({
      found: true,
      item: false,
    });
  });

  it('answers auth for a wrong key, scope for a missing scope, and bad_request for a value the service refuses, each without retry', async () => {
    const wrong = client(sb, { apiKey: 'not-a-key' });
    const scoped = client(sb, { apiKey: 'certs-only' });
    try {
      expect((await scoped.all(endpoints.pendingCertifications, {})).rejects).toEqual([]);
      const before = sb.stats().requests;
      expect((await failure(wrong.all(endpoints.locales, {}))).kind).toBe('auth');
      const scope = await failure(scoped.all(endpoints.individuals, {}));
      expect([scope.kind, scope.status, scope.code]).toEqual(['scope', 403, 'insufficient_scope']);
      const bad = await failure(
        c.all(endpoints.individualCourses, { startDate: '2024-02-01', endDate: '2024-02-30', statusOption: 0 }),
      );
      expect([bad.kind, bad.status, bad.code]).toEqual(['bad_request', 400, 'invalid_parameters']);
      expect(bad.message).toContain('endDate');
      expect(sb.stats().requests - before).toBe(3);
    } finally {
      await wrong.close();
      await scoped.close();
    }
  });
});

describe('writes to a tiny sandbox', () => {
  let sb: RunningSandbox;
  let c: SourceClient;

  beforeAll(async () => {
    sb = await startSandbox({ port: 0, seed: 5, size: 'tiny', rateLimit: null });
    c = client(sb);
  });

  afterAll(async () => {
    await c?.close();
    await sb?.close();
  });

  it('inserts and updates an individual, and reads it back', async () => {
    const created = await c.send(
      endpoints.individualInsert,
      {
        FirstName: 'Ann',
        LastName: 'Sandbox',
        Status: 'Active',
        PrimaryEmailAddress: 'ann.sandbox@example.com',
        LogonId: 'annsandbox1',
        EmployeeNumber: 'EMP-T-1',
        UniqueNumber: 'UN-T-1',
      },
      { lane: 'push' },
    );
    expect(created).toMatchObject({ FirstName: 'Ann', LastName: 'Sandbox' });
    const found = await c.lookup(endpoints.individualByServiceId, { serviceId: created!.ServiceId });
    expect(found.found && found.item.LogonId).toBe('annsandbox1');
    const {
      IndividualId: _i,
      CompanyId: _c,
      LegalFirstName: _l1,
      LegalMiddleName: _l2,
      LegalLastName: _l3,
      JobTitleId: _j,
      AdditionalJobTitles: _a,
      SupervisorName: _s,
      ...writable
    } = found.found ? found.item : created!;
    const updated = await c.send(endpoints.individualUpdate, { ...writable, MiddleName: 'Q' });
    expect(updated).toMatchObject({ ServiceId: created!.ServiceId, MiddleName: 'Q' });
  });

  it('inserts and updates a credential and submits a verification result', async () => {
    const [person] = (await c.all(endpoints.individuals, { ExcludeStatuses: ['Former', 'LOA'] })).items;
    const [cert] = (await c.all(endpoints.certifications, {})).items;
    const inserted = await c.send(endpoints.certificationInsert, {
      ServiceId: person!.ServiceId,
      CertificationId: cert!.CertificationId,
      CertificationNumber: 'T-123',
      ActivationDate: '2024-01-01',
      ExpirationDate: '2027-01-01',
    });
    expect(inserted).toMatchObject({ ServiceId: person!.ServiceId, CertificationNumber: 'T-123' });
    const updated = await c.send(endpoints.certificationUpdate, {
      IndividualCertificationId: inserted!.IndividualCertificationId,
      ServiceId: person!.ServiceId,
      CertificationId: cert!.CertificationId,
      CertificationNumber: 'T-124',
      ActivationDate: '2024-01-01',
      ExpirationDate: '2028-01-01',
    });
    expect(updated).toMatchObject({
      IndividualCertificationId: inserted!.IndividualCertificationId,
      CertificationNumber: 'T-124',
    });
    const result = await c.send(endpoints.validateSubmission, [
      {
        RequestId: 'req-1',
        IndividualCertificationId: String(inserted!.IndividualCertificationId),
        IsVerified: true,
        IssueDate: '2024-01-01',
        ExpirationDate: '2028-01-01',
      },
    ]);
    expect(result).toBeNull();
  });

  it('surfaces the service’s refusal of a write with its field messages', async () => {
    const e = await failure(
      c.send(endpoints.individualUpdate, {
        ServiceId: 987_654_321,
        FirstName: 'X',
        LastName: 'Y',
        Status: 'Active',
        PrimaryEmailAddress: 'x@y.co',
      }),
    );
    expect(['bad_request', 'not_found']).toContain(e.kind);
    expect(e.retryable).toBe(false);
  });
});

describe('faults', () => {
  async function withSandbox(opts: SandboxOptions, run: (sb: RunningSandbox) => Promise<void>): Promise<void> {
    const sb = await startSandbox({ port: 0, seed: 3, size: 'tiny', rateLimit: null, ...opts });
    try {
      await run(sb);
    } finally {
      await sb.close();
    }
  }

  const now = (sb: RunningSandbox) => sb.data.now().getTime();
  const assignments = (sb: RunningSandbox) => ({
    StartDate: new Date(now(sb) - 30 * DAY),
    EndDate: new Date(now(sb) + 14 * DAY),
  });

  it('reads everything despite 500s, resets and truncated bodies', async () => {
    await withSandbox({}, async (sb) => {
      const clean = client(sb);
      const expected = await clean.all(endpoints.shiftAssignments, assignments(sb), { pageSize: 50 });
      await clean.close();
      sb.setFaults({ error500: 0.15, reset: 0.1, truncate: 0.1 });
      const c = client(sb, { maxRetries: 10 });
      try {
        const got = await c.all(endpoints.shiftAssignments, assignments(sb), { pageSize: 50 });
        expect(got.items).toEqual(expected.items);
        const individuals = await c.all(endpoints.individuals, {});
        expect(individuals.items.length).toBe(truth(sb, endpoints.individuals, {}).length);
        expect(c.stats().retries).toBeGreaterThan(0);
      } finally {
        await c.close();
      }
    });
  });

  it('retries a slow response that times out, and answers timeout when every attempt is slow', async () => {
    await withSandbox({ faults: { slow: 0.5, slowMs: 400 } }, async (sb) => {
      const c = client(sb, { timeoutMs: 150, maxRetries: 10 });
      const once = client(sb, { timeoutMs: 150, maxRetries: 1 });
      try {
        expect((await c.all(endpoints.individuals, {})).rejects).toEqual([]);
        sb.setFaults({ slow: 1, slowMs: 400 });
        expect((await failure(once.all(endpoints.locales, {}))).kind).toBe('timeout');
        expect(once.stats().requests).toBe(2);
      } finally {
        await c.close();
        await once.close();
      }
    });
  });

  it('rides out a 429 storm by waiting for X-RateLimit-Reset', async () => {
    await withSandbox({ rateLimit: { limit: 1000, periodMs: 1000 } }, async (sb) => {
      // Storms every 1.5 s, not a multiple of the period, so whole-second resets do not land in every storm.
      sb.setFaults({ storm429: { everyMs: 1500, forMs: 400 } });
      const limiter: RateLimiter = createRateLimiter({ rateLimit: { limit: 1000, periodMs: 1000 } });
      const c = client(sb, { limiter });
      try {
        const got = await c.all(endpoints.shiftAssignments, assignments(sb), { pageSize: 20 });
        expect(got.items.length).toBe(truth(sb, endpoints.shiftAssignments, assignments(sb)).length);
        expect(c.stats().rateLimited).toBeGreaterThan(0);
      } finally {
        await c.close();
        await limiter.close();
      }
    });
  });

  it('waits out the service’s own budget when the limiter does not pace', async () => {
    await withSandbox({ rateLimit: { limit: 4, periodMs: 500 } }, async (sb) => {
      const recording = new RecordingLimiter();
      const c = client(sb, { limiter: recording });
      try {
        for (let i = 0; i < 10; i++) await c.all(endpoints.locales, {});
        expect(c.stats().rateLimited).toBeGreaterThan(0);
        expect(recording.observed.some((o) => o.feedback.limited && o.feedback.resetAtMs !== undefined)).toBe(true);
        expect(recording.observed.every((o) => o.feedback.remaining !== undefined)).toBe(true);
      } finally {
        await c.close();
      }
    });
  });

  it('gets no 429 at all when the shared limiter paces to the same budget', async () => {
    await withSandbox({ rateLimit: { limit: 4, periodMs: 500 } }, async (sb) => {
      // The margin covers the first request's connection setup, which delays when the service starts its period;
      // the default (1% of a period this short: 5 ms) is less than that under a loaded test run.
      const limiter = createRateLimiter({ rateLimit: { limit: 4, periodMs: 500 }, safetyMarginMs: 50 });
      const c = client(sb, { limiter });
      try {
        for (let i = 0; i < 10; i++) await c.all(endpoints.locales, {});
        expect(c.stats()).toMatchObject({ requests: 10, rateLimited: 0 });
      } finally {
        await c.close();
        await limiter.close();
      }
    });
  });
});
