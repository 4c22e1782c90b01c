import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runStreams, selectStreams } from '../../src/sync/runner.ts';
import { syncedWarehouse, type SyncedWarehouse } from '../support/synced-warehouse.ts';

/**
 * The HR views against figures computed from the sandbox's own records (its truth), not from the warehouse: the
 * same questions answered twice, once in SQL over what the sync wrote and once in TypeScript over what the
 * service holds.
 */

type Item = Record<string, any>;

let w: SyncedWarehouse;
const truth = (endpoint: string) => w.sandbox.data.truth(endpoint as never) as Item[];
const view = (name: string) =>
  w.sync.warehouse.sql.unsafe(`select * from workforce.${name} where company_key = 'acme'`);

/** Sums of `fields` per key, as sorted [key, ...sums] rows. */
function tally(items: Item[], key: (x: Item) => unknown[] | undefined, fields: (x: Item) => number[]): unknown[][] {
  const sums = new Map<string, number[]>();
  for (const x of items) {
    const k = key(x);
    if (!k) continue;
    const id = JSON.stringify(k);
    const add = fields(x);
    const s = sums.get(id) ?? add.map(() => 0);
    sums.set(
      id,
      s.map((v, i) => v + add[i]!),
    );
  }
  return [...sums]
    .map(([k, s]) => [...(JSON.parse(k) as unknown[]), ...s.map((v) => Math.round(v * 100) / 100)])
    .sort(byJson);
}

const byJson = (a: unknown, b: unknown) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1);
const rowsOf = (rows: Item[], cols: string[]) =>
  rows
    .map((r) => cols.map((c) => (typeof r[c] === 'string' && /^-?\d+(\.\d+)?$/.test(r[c]) ? Number(r[c]) : r[c])))
    .sort(byJson);
const localDate = (text: string | null | undefined) => (text ? text.slice(0, 10) : null);
const monthOf = (date: string | null) => (date ? `${date.slice(0, 7)}-01` : null);
const hours = (from?: string | null, to?: string | null) =>
  from && to ? (Date.parse(to) - Date.parse(from)) / 3_600_000 : 0;

function mondayOf(date: string): string {
  const d = new Date(`${date}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() - ((d.getUTCDay() + 6) % 7));
  return d.toISOString().slice(0, 10);
}

beforeAll(async () => {
  w = await syncedWarehouse({ size: 'tiny' });
}, 120_000);

afterAll(async () => {
  await w?.close();
});

describe('HR views equal the sandbox’s own figures', () => {
  it('v_headcount_daily counts today’s people by department, job title, status and employee or not', async () => {
    const [{ today }] = (await w.sync.warehouse.sql`select current_date::text as today`) as unknown as [
      { today: string },
    ];
    const rows = (await view('v_headcount_daily')).filter((r) => r.day === today);
    const expected = tally(
      truth('individuals'),
      (i) => [i.Department, i.JobTitle, i.Status, i.IsEmployee === 1],
      () => [1],
    );
    expect(expected.length).toBeGreaterThan(3);
    expect(rowsOf(rows, ['department', 'job_title', 'status', 'is_employee', 'headcount'])).toEqual(expected);
  });

  it('v_hours_weekly sums scheduled and worked hours per person and week, with overtime past 40', async () => {
    const assigned = truth('shiftAssignments').filter((a) => a.Assignee?.ServiceId != null);
    const expected = tally(
      assigned,
      (a) => [a.Assignee.ServiceId, mondayOf(localDate(a.StartDateTime)!)],
      (a) => [1, hours(a.StartDateTime, a.EndDateTime), hours(a.ClockInDateTime, a.ClockOutDateTime)],
    ).map(([id, week, shifts, scheduled, worked]) => [
      id,
      week,
      shifts,
      scheduled,
      worked,
      Math.round(Math.max((worked as number) - 40, 0) * 100) / 100,
    ]);
    expect(expected.some((r) => (r[5] as number) > 0)).toBe(true);
    expect(
      rowsOf(await view('v_hours_weekly'), [
        'service_id',
        'week',
        'shifts',
        'scheduled_hours',
        'worked_hours',
        'overtime_hours',
      ]),
    ).toEqual(expected);
  });

  it('v_time_off_monthly sums hours requested and approved per leave type and month', async () => {
    const requests = truth('timeOffRequests');
    const requested = tally(
      requests,
      (r) => [monthOf(localDate(r.StartDateTime)), r.RequestedLeaveType],
      (r) => [1, Number(r.RequestedHours ?? 0), 0, 0],
    );
    const approvedParts = requests
      .filter((r) => r.Status === 'Approved')
      .flatMap((r) =>
        [...new Set((r.ApprovedHours ?? []).map((h: Item) => h.ApprovedLeaveType))].map((type) => ({ r, type })),
      );
    const approved = tally(
      approvedParts,
      ({ r, type }) => [monthOf(localDate(r.StartDateTime)), type],
      ({ r, type }) => [
        0,
        0,
        1,
        (r.ApprovedHours as Item[])
          .filter((h) => h.ApprovedLeaveType === type)
          .reduce((s, h) => s + Number(h.ApprovedHours ?? 0), 0),
      ],
    );
    const expected = tally(
      [...requested, ...approved],
      (r) => [r[0], r[1]],
      (r) => [r[2], r[3], r[4], r[5]] as number[],
    );
    expect(approved.length).toBeGreaterThan(0);
    expect(
      rowsOf(await view('v_time_off_monthly'), [
        'month',
        'leave_type',
        'requests',
        'requested_hours',
        'approved_requests',
        'approved_hours',
      ]),
    ).toEqual(expected);
  });

  it('v_course_completion counts attempts and completions per course and month', async () => {
    const expected = tally(
      truth('individualCourses'),
      (c) => (c.StartDate ? [c.CourseName, monthOf(localDate(c.StartDate))] : undefined),
      (c) => [1, c.Status === 'Passed' || c.Status === 'Approved' ? 1 : 0],
    );
    const rows = await view('v_course_completion');
    expect(rowsOf(rows, ['course_name', 'month', 'attempts', 'completions'])).toEqual(expected);
    for (const r of rows) expect(Number(r.share_completed)).toBeCloseTo(r.completions / r.attempts, 4);
  });

  it('v_credential_compliance gives the share of required credentials current today and at each month end', async () => {
    const rows = await view('v_credential_compliance');
    const dates = [...new Set(rows.map((r) => `${r.period} ${r.as_of}`))].sort();
    expect(dates.length).toBe(13);
    const department = new Map(truth('individuals').map((i) => [i.ServiceId, i.Department]));
    const certs = truth('individualCertifications').filter((c) => c.IsDeleted !== true);
    const required = new Map<string, Item>();
    for (const s of truth('requiredCertificationStatus')) {
      for (const cr of s.CredentialRequirements ?? []) {
        for (const q of cr.Requirements ?? []) {
          if (q.Requirement == null) continue;
          const names = [
            q.Requirement.toLowerCase(),
            (q.FulfillingCertification?.CertificationName ?? q.Requirement).toLowerCase(),
          ];
          const r = {
            serviceId: s.Employment.ServiceId,
            jobTitleId: cr.JobTitle?.JobTitleId ?? null,
            jobTitleName: cr.JobTitle?.JobTitleName ?? null,
            names,
          };
          required.set(JSON.stringify([r.serviceId, r.jobTitleId, r.jobTitleName, q.Requirement, names[1]]), r);
        }
      }
    }
    const judged = dates.flatMap((pd) => {
      const [period, asOf] = pd.split(' ') as [string, string];
      return [...required.values()].map((r) => ({
        period,
        asOf,
        r,
        current: certs.some(
          (c) =>
            c.ServiceId === r.serviceId &&
            r.names.includes(String(c.CertificationName).toLowerCase()) &&
            (!c.ActivationDate || c.ActivationDate <= asOf) &&
            (!c.ExpirationDate || c.ExpirationDate >= asOf),
        ),
      }));
    });
    const expected = tally(
      judged,
      (j) => [j.period, j.asOf, department.get(j.r.serviceId) ?? null, j.r.jobTitleId, j.r.jobTitleName],
      (j) => [1, j.current ? 1 : 0],
    );
    expect(expected.some((e) => (e[6] as number) > 0)).toBe(true);
    expect(
      rowsOf(rows, ['period', 'as_of', 'department', 'job_title_id', 'job_title_name', 'required', 'current']),
    ).toEqual(expected);
  });

  it('v_hires_and_exits_monthly counts hires by hire date and exits as they are synced', async () => {
    const before = new Map(truth('individuals').map((i) => [i.ServiceId, i.Status]));
    w.sandbox.data.advance(24 * 60);
    expect((await runStreams(w.sync.ctx, selectStreams(['individuals']))).failed).toBe(0);
    const [{ month }] = (await w.sync.warehouse
      .sql`select date_trunc('month', now())::date::text as month`) as unknown as [{ month: string }];
    const people = truth('individuals');
    const hires = tally(
      people,
      (i) => (i.HireDate ? [monthOf(i.HireDate), i.Department] : undefined),
      () => [1, 0],
    );
    const left = people.filter(
      (i) => i.Status === 'Former' && before.has(i.ServiceId) && before.get(i.ServiceId) !== 'Former',
    );
    const exits = tally(
      left,
      (i) => [month, i.Department],
      () => [0, 1],
    );
    expect(exits.length).toBeGreaterThan(0);
    const expected = tally(
      [...hires, ...exits],
      (r) => [r[0], r[1]],
      (r) => [r[2], r[3]] as number[],
    );
    expect(rowsOf(await view('v_hires_and_exits_monthly'), ['month', 'department', 'hires', 'exits'])).toEqual(
      expected,
    );
  });
});
