import { describe, expect, it } from 'vitest';
import type {
  AssignmentChange,
  FormAudit,
  Individual,
  IndividualCertification,
  IndividualCourse,
  ShiftAssignment,
  TimeOffRequest,
} from '../../src/source/schemas/index.ts';
import { createSandboxData } from '../../src/sandbox/data.ts';
import type { ParsedQuery, ReadResult } from '../../src/sandbox/service.ts';
import type { FormResponse, RunLogFormResponse } from '../../src/sandbox/store.ts';

const data = createSandboxData({ seed: 11, size: 'small' });
const ALL = { offset: 0, limit: 1_000_000 };

function read<T>(
  endpoint: Parameters<typeof data.read>[0],
  query: ParsedQuery,
  page = ALL,
): Omit<ReadResult, 'items'> & { items: T[] } {
  const r = data.read(endpoint, query, page);
  if (!r.ok) throw new Error(`refused: ${JSON.stringify(r.refusal)}`);
  return r.value as Omit<ReadResult, 'items'> & { items: T[] };
}

function refusal(endpoint: Parameters<typeof data.read>[0], query: ParsedQuery) {
  const r = data.read(endpoint, query, { offset: 0, limit: 200 });
  if (r.ok) throw new Error('expected a refusal');
  return r.refusal;
}

const people = data.truth('individuals') as Individual[];
const active = people.find((p) => p.Status === 'Active' && p.IsEmployee === 1 && p.EmployeeNumber) as Individual;
const former = people.find((p) => p.Status === 'Former') as Individual;
const ms = (s: string | null | undefined) => Date.parse(s ?? '');

describe('individuals', () => {
  it('ExcludeStatuses leaves out the listed statuses', () => {
    const items = read<Individual>('individuals', { ExcludeStatuses: ['Former', 'LOA'] }).items;
    expect(items.length).toBe(people.filter((p) => p.Status === 'Active').length);
    expect(items.every((p) => p.Status === 'Active')).toBe(true);
  });

  it('by-key lookups return the one individual, or 404 not_found', () => {
    expect(read('individualByServiceId', { serviceId: active.ServiceId }).items).toEqual([active]);
    expect(read('individualByUniqueIdentifier', { uniqueIdentifier: active.UniqueNumber ?? '' }).items).toEqual([
      active,
    ]);
    expect(read('individualByEmployeeNumber', { employeeNumber: active.EmployeeNumber ?? '' }).items).toEqual([active]);
    expect(refusal('individualByServiceId', { serviceId: 1 })).toMatchObject({ status: 404, code: 'not_found' });
    expect(refusal('individualByEmployeeNumber', { employeeNumber: 'nobody' })).toMatchObject({
      status: 404,
      code: 'not_found',
    });
  });

  it('Exists answers true when an employee with that unique identifier exists', () => {
    expect(read('individualExists', { uniqueIdentifier: active.UniqueNumber ?? '' }).items).toEqual([true]);
    expect(read('individualExists', { uniqueIdentifier: 'UN-none' }).items).toEqual([false]);
  });
});

describe('individual certifications', () => {
  const certs = data.truth('individualCertifications') as IndividualCertification[];

  it('list the latest versions of Active and LOA employees only, without deleted ones by default', () => {
    const items = read<IndividualCertification>('individualCertifications', {}).items;
    const status = new Map(people.map((p) => [p.ServiceId, p.Status]));
    expect(items.length).toBeGreaterThan(0);
    expect(items.every((c) => status.get(c.ServiceId ?? 0) !== 'Former' && c.IsDeleted === false)).toBe(true);
    expect(read('individualCertifications', { ServiceId: former.ServiceId }).items).toEqual([]);
  });

  it('IncludeDeleted=true adds the deleted ones, marked IsDeleted', () => {
    const withDeleted = read<IndividualCertification>('individualCertifications', { IncludeDeleted: true }).items;
    const without = read<IndividualCertification>('individualCertifications', { IncludeDeleted: false }).items;
    expect(withDeleted.length).toBeGreaterThan(without.length);
    expect(withDeleted.filter((c) => c.IsDeleted).length).toBe(withDeleted.length - without.length);
  });

  it('ServiceId, UniqueIdentifier and EmployeeNumber each restrict to one employee; an unknown one is 404', () => {
    const mine = certs.filter((c) => c.ServiceId === active.ServiceId && !c.IsDeleted);
    expect(read('individualCertifications', { ServiceId: active.ServiceId }).items).toEqual(mine);
    expect(read('individualCertifications', { UniqueIdentifier: active.UniqueNumber ?? '' }).items).toEqual(mine);
    expect(read('individualCertifications', { EmployeeNumber: active.EmployeeNumber ?? '' }).items).toEqual(mine);
    expect(refusal('individualCertifications', { ServiceId: 99 })).toMatchObject({ status: 404, code: 'not_found' });
    expect(refusal('individualCertifications', { EmployeeNumber: 'x' })).toMatchObject({
      status: 404,
      code: 'not_found',
    });
  });

  it('updatedSince keeps credentials updated on or after that date; primaryOnly keeps the primary ones', () => {
    const since = '2026-01-01';
    const items = read<IndividualCertification>('individualCertifications', {
      updatedSince: new Date(`${since}T00:00:00Z`),
    }).items;
    expect(items.length).toBeGreaterThan(0);
    expect(items.every((c) => (c.UpdateDate ?? '') >= since)).toBe(true);
    const onTheDay = certs
      .filter((c) => c.UpdateDate === since && !c.IsDeleted)
      .map((c) => c.IndividualCertificationId);
    for (const id of onTheDay) expect(items.some((c) => c.IndividualCertificationId === id)).toBe(true);
    const primary = read<IndividualCertification>('individualCertifications', { primaryOnly: true }).items;
    expect(primary.length).toBeGreaterThan(0);
    expect(primary.every((c) => c.IsPrimary)).toBe(true);
  });

  it('required status with an unknown employee is an empty page, one employee gives one item', () => {
    expect(read('requiredCertificationStatus', { ServiceId: 5 }).items).toEqual([]);
    expect(read('requiredCertificationStatus', { ServiceId: active.ServiceId }).items).toHaveLength(1);
  });
});

describe('shift assignments', () => {
  const everything = data.truth('shiftAssignments') as ShiftAssignment[];
  const sample = everything[Math.floor(everything.length / 2)] as ShiftAssignment;
  const start = new Date(ms(sample.StartDateTime));

  it('StartDate and EndDate filter on the assignment start, both bounds inclusive', () => {
    const items = read<ShiftAssignment>('shiftAssignments', { StartDate: start, EndDate: start }).items;
    expect(items.length).toBeGreaterThan(0);
    expect(items.every((a) => ms(a.StartDateTime) === start.getTime())).toBe(true);
    expect(items).toContain(sample);
    const week = read<ShiftAssignment>('shiftAssignments', {
      StartDate: start,
      EndDate: new Date(start.getTime() + 7 * 86_400_000),
    }).items;
    expect(week.length).toBe(
      everything.filter(
        (a) => ms(a.StartDateTime) >= start.getTime() && ms(a.StartDateTime) <= start.getTime() + 7 * 86_400_000,
      ).length,
    );
  });

  it('Only* flags: ride-alongs excluded or alone, open, filled, and clocked in (in and not out)', () => {
    const q = { StartDate: new Date('2025-01-01T00:00:00Z'), EndDate: new Date('2027-01-01T00:00:00Z') };
    const n = (extra: ParsedQuery) => read<ShiftAssignment>('shiftAssignments', { ...q, ...extra }).items;
    expect(n({}).length).toBe(everything.length);
    expect(n({ OnlyShiftAssignment: true }).every((a) => a.Type === 'Shift Assignment')).toBe(true);
    expect(n({ OnlyShiftAssignment: true }).length + n({ OnlyRideAlong: true }).length).toBe(everything.length);
    expect(n({ OnlyOpenShifts: true }).every((a) => a.Assignee === null)).toBe(true);
    expect(n({ OnlyOpenShifts: true }).length + n({ OnlyFilledShifts: true }).length).toBe(everything.length);
    const clocked = n({ OnlyClockedInShifts: true });
    expect(clocked.length).toBeGreaterThan(0);
    expect(clocked.every((a) => a.ClockInDateTime !== null && a.ClockOutDateTime === null)).toBe(true);
  });

  it('pages in a stable order: the pages put together are the whole list, HasMoreResults only before the last', () => {
    const q = { StartDate: new Date('2025-12-01T00:00:00Z'), EndDate: new Date('2026-01-31T00:00:00Z') };
    const whole = read<ShiftAssignment>('shiftAssignments', q).items;
    const paged: ShiftAssignment[] = [];
    for (let offset = 0; ; offset += 200) {
      const page = read<ShiftAssignment>('shiftAssignments', q, { offset, limit: 200 });
      paged.push(...page.items);
      if (!page.hasMore) break;
    }
    expect(paged).toEqual(whole);
    const starts = whole.map((a) => ms(a.StartDateTime));
    expect(starts).toEqual([...starts].sort((a, b) => a - b));
  });

  it('a missing required StartDate is refused with invalid_parameters', () => {
    expect(refusal('shiftAssignments', { EndDate: start })).toMatchObject({ status: 400, code: 'invalid_parameters' });
  });

  it('assignment changes filter on EventTimeStamp between StartDate and EndDate', () => {
    const from = new Date('2026-01-01T00:00:00Z');
    const to = new Date('2026-01-10T00:00:00Z');
    const items = read<AssignmentChange>('assignmentChanges', { StartDate: from, EndDate: to }).items;
    expect(items.length).toBeGreaterThan(0);
    expect(items.every((c) => ms(c.EventTimeStamp) >= from.getTime() && ms(c.EventTimeStamp) <= to.getTime())).toBe(
      true,
    );
    const all = data.truth('assignmentChanges') as AssignmentChange[];
    expect(items.length).toBe(
      all.filter((c) => ms(c.EventTimeStamp) >= from.getTime() && ms(c.EventTimeStamp) <= to.getTime()).length,
    );
  });
});

describe('time off requests', () => {
  const all = data.truth('timeOffRequests') as TimeOffRequest[];

  it('StartDateTime filters on request start, EndDateTime on request end; RequestStatus and employee narrow', () => {
    const from = new Date('2025-12-01T00:00:00Z');
    const to = new Date('2026-01-31T00:00:00Z');
    const items = read<TimeOffRequest>('timeOffRequests', { StartDateTime: from, EndDateTime: to }).items;
    const expected = all.filter((r) => ms(r.StartDateTime) >= from.getTime() && ms(r.EndDateTime) <= to.getTime());
    expect(items).toEqual(expected);
    const approved = read<TimeOffRequest>('timeOffRequests', {
      StartDateTime: from,
      EndDateTime: to,
      RequestStatus: ['Approved', 'Denied'],
    }).items;
    expect(approved.length).toBe(expected.filter((r) => r.Status === 'Approved' || r.Status === 'Denied').length);
    const someone = expected[0]?.Employee;
    const theirs = read<TimeOffRequest>('timeOffRequests', {
      StartDateTime: from,
      EndDateTime: to,
      UniqueNumber: someone?.UniqueIdentifier ?? '',
    }).items;
    expect(theirs.length).toBeGreaterThan(0);
    expect(theirs.every((r) => r.Employee.ServiceId === someone?.ServiceId)).toBe(true);
  });

  it('approved requests carry ApprovedHours and a reviewer; pending ones have no reviewer', () => {
    for (const r of all) {
      if (r.Status === 'Approved') {
        expect(r.ApprovedHours?.reduce((n, h) => n + (h.ApprovedHours ?? 0), 0)).toBe(r.RequestedHours);
        expect(r.ReviewedDateTime).not.toBeNull();
      }
      if (r.Status === 'Pending') expect(r.ReviewedBy).toBeNull();
    }
  });
});

describe('individual courses', () => {
  const q = { startDate: new Date('2025-12-20T00:00:00Z'), endDate: new Date('2026-01-15T00:00:00Z') };

  it('statusOption 0 returns all; 1, 2 and 3 split them into in progress/pending, failed/denied, success/approved', () => {
    const all = read<IndividualCourse>('individualCourses', { ...q, statusOption: 0 }).items;
    const parts = [1, 2, 3].map(
      (statusOption) => read<IndividualCourse>('individualCourses', { ...q, statusOption }).items,
    );
    expect(parts.reduce((n, p) => n + p.length, 0)).toBe(all.length);
    expect(new Set(parts[0]?.map((c) => c.Status))).toEqual(new Set(['In Progress', 'Pending Approval']));
    expect([...new Set(parts[2]?.map((c) => c.Status))].every((s) => s === 'Passed' || s === 'Approved')).toBe(true);
    expect(all.every((c) => (c.StartDate ?? '') >= '2025-12-20' && (c.StartDate ?? '') <= '2026-01-15')).toBe(true);
  });

  it('individualId restricts to one individual, 0 means all', () => {
    const all = read<IndividualCourse>('individualCourses', { ...q, statusOption: 0, individualId: 0 }).items;
    const one = all[0] as IndividualCourse;
    const theirs = read<IndividualCourse>('individualCourses', {
      ...q,
      statusOption: 0,
      individualId: one.IndividualId ?? 0,
    }).items;
    expect(theirs.length).toBeGreaterThan(0);
    expect(theirs.every((c) => c.IndividualId === one.IndividualId)).toBe(true);
  });

  it('a range over 31 days is refused: "must not exceed 31 days"', () => {
    const r = refusal('individualCourses', {
      startDate: new Date('2025-12-01T00:00:00Z'),
      endDate: new Date('2026-01-02T00:00:00Z'),
      statusOption: 0,
    });
    expect(r).toMatchObject({ status: 400, code: 'invalid_parameters' });
    expect(r.message).toMatch(/31 days/);
    expect(
      read('individualCourses', {
        startDate: new Date('2025-12-01T00:00:00Z'),
        endDate: new Date('2026-01-01T00:00:00Z'),
        statusOption: 0,
      }).items.length,
    ).toBeGreaterThan(0);
  });
});

describe('forms', () => {
  it('form responses filter on the form start date and carry FormId and FormTitle; an unknown FormId is 404', () => {
    const formId = data.formIds()[0] as number;
    const r = read<FormResponse>('formResponses', {
      FormId: formId,
      StartDate: new Date('2025-11-01T00:00:00Z'),
      EndDate: new Date('2026-01-15T00:00:00Z'),
    });
    expect(r.items.length).toBeGreaterThan(0);
    expect(
      r.items.every((x) => String(x.StartDate) >= '2025-11-01' && String(x.StartDate).slice(0, 10) <= '2026-01-15'),
    ).toBe(true);
    expect(r.extras).toEqual({ FormId: formId, FormTitle: 'Employee Incident Report' });
    expect(refusal('formResponses', { FormId: 9, StartDate: new Date(), EndDate: new Date() })).toMatchObject({
      status: 404,
      code: 'not_found',
    });
  });

  it('run-log responses filter on RunTypeId, FormType and run date, with RunLogTypeId, RunLogTypeName, RunLogFormType', () => {
    const runTypeId = data.runTypeIds()[0] as number;
    const q = {
      RunTypeId: runTypeId,
      FormType: 'Debrief',
      StartDate: new Date('2025-10-01T00:00:00Z'),
      EndDate: new Date('2026-01-15T12:00:00Z'),
    };
    const r = read<RunLogFormResponse>('runLogFormResponses', q);
    expect(r.items.length).toBeGreaterThan(0);
    expect(r.extras).toEqual({ RunLogTypeId: runTypeId, RunLogTypeName: '911 Emergency', RunLogFormType: 'Debrief' });
    expect(
      r.items.every(
        (x) => x.RelatedRun?.RunType === '911 Emergency' && ms(x.RelatedRun.RunDateTime) >= q.StartDate.getTime(),
      ),
    ).toBe(true);
    const all = data.truth('runLogFormResponses') as RunLogFormResponse[];
    const utilization = read<RunLogFormResponse>('runLogFormResponses', { ...q, FormType: 'Utilization' }).items;
    expect(utilization.every((x) => !r.items.includes(x))).toBe(true);
    expect(all.length).toBeGreaterThan(r.items.length + utilization.length);
  });

  it('form audit filters on InsertDate between StartDate and EndDate, FormId optional', () => {
    const from = new Date('2025-12-01T00:00:00Z');
    const to = new Date('2026-01-01T00:00:00Z');
    const rows = read<FormAudit>('formAudit', { StartDate: from, EndDate: to }).items;
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.every((a) => ms(a.InsertDate) >= from.getTime() && ms(a.InsertDate) <= to.getTime())).toBe(true);
    const formId = data.formIds()[1] as number;
    const one = read<FormAudit>('formAudit', { FormId: formId, StartDate: from, EndDate: to }).items;
    expect(one.length).toBeGreaterThan(0);
    expect(one.length).toBeLessThan(rows.length);
    // Question ids are numbered within their form (formId * 100 + n).
    expect(one.every((a) => Math.floor((a.ItemId ?? 0) / 100) === formId)).toBe(true);
  });
});
