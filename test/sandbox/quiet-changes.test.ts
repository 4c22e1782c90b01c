import { describe, expect, it } from 'vitest';
import type {
  AssignmentChange,
  FormAudit,
  Individual,
  IndividualCertification,
  IndividualCourse,
  Schedule,
  ShiftAssignment,
  TimeOffRequest,
} from '../../src/source/schemas/index.ts';
import { createSandboxData } from '../../src/sandbox/data.ts';
import type { FormResponse, RunLogFormResponse } from '../../src/sandbox/store.ts';

/**
 * The changes the real service makes without a signal (no change record, no newer UpdateDate, nothing in a recent
 * window), and late-stamped events. Two weeks of `small`, advanced a day at a time as a scheduler would see it.
 */

const DAY = 86_400_000;
const LATE_MS = 30 * 60_000;
const ms = (s: string | null | undefined) => Date.parse(s ?? '');
const all = { offset: 0, limit: 10_000_000 };
const byId = <T, K>(items: readonly T[], key: (t: T) => K) => new Map(items.map((i) => [key(i), i]));
const timeOffKey = (t: TimeOffRequest) => `${t.Employee.ServiceId}|${t.StartDateTime}|${t.RequestedDateTime}`;

describe('changes without a signal, over two weeks of small', () => {
  const data = createSandboxData({ seed: 21, size: 'small' });
  const start = data.now().getTime();
  const truth = <T>(name: Parameters<typeof data.truth>[0]) => data.truth(name) as T[];
  const before = {
    people: byId(truth<Individual>('individuals'), (i) => i.ServiceId),
    certs: byId(truth<IndividualCertification>('individualCertifications'), (c) => c.IndividualCertificationId),
    assignments: byId(truth<ShiftAssignment>('shiftAssignments'), (a) => a.ShiftAssignmentId),
    timeOff: byId(truth<TimeOffRequest>('timeOffRequests'), timeOffKey),
    courses: byId(truth<IndividualCourse>('individualCourses'), (c) => c.IndividualCourseId),
    responses: new Set(truth<FormResponse>('formResponses').map((r) => r.ResponseId)),
    runLog: new Set(truth<RunLogFormResponse>('runLogFormResponses').map((r) => r.ResponseId)),
  };
  const counts: Record<string, number> = {};
  /** Per advance: change records and audit rows that appeared stamped before the advance began. */
  const late = { changes: [] as { stamp: number; from: number }[], audit: [] as { stamp: number; from: number }[] };
  for (let d = 0; d < 14; d++) {
    const from = data.now().getTime();
    const changesBefore = new Set(truth<AssignmentChange>('assignmentChanges').map((c) => JSON.stringify(c)));
    const auditBefore = new Set(truth<FormAudit>('formAudit').map((a) => JSON.stringify(a)));
    for (const [k, v] of Object.entries(data.advance(24).counts)) counts[k] = (counts[k] ?? 0) + v;
    for (const c of truth<AssignmentChange>('assignmentChanges')) {
      if (ms(c.EventTimeStamp) <= from && !changesBefore.has(JSON.stringify(c)))
        late.changes.push({ stamp: ms(c.EventTimeStamp), from });
    }
    for (const a of truth<FormAudit>('formAudit')) {
      if (ms(a.InsertDate) <= from && !auditBefore.has(JSON.stringify(a)))
        late.audit.push({ stamp: ms(a.InsertDate), from });
    }
  }
  const now = data.now().getTime();
  const people = truth<Individual>('individuals');
  const certs = truth<IndividualCertification>('individualCertifications');
  const assignments = byId(truth<ShiftAssignment>('shiftAssignments'), (a) => a.ShiftAssignmentId);
  const recorded = new Set(
    truth<AssignmentChange>('assignmentChanges')
      .filter((c) => ms(c.EventTimeStamp) > start - LATE_MS)
      .map((c) => c.ShiftAssignmentId),
  );

  it('happen at realistic rates: every kind at least once in two weeks', () => {
    for (const kind of [
      'individualsRenamed',
      'jobTitleChanges',
      'localeChanges',
      'identifierChanges',
      'individualsReturned',
      'timeOffLateDecisions',
      'courseStatusChanges',
      'coursesDeleted',
      'assignmentTimesChanged',
      'vehiclesChanged',
      'clockCorrections',
      'assignmentsMovedToPastDay',
      'formResponsesDeleted',
      'runLogResponsesDeleted',
      'lateChangeRecords',
      'lateAuditRows',
    ]) {
      expect(counts[kind], kind).toBeGreaterThan(0);
      expect(counts[kind], kind).toBeLessThan(200);
    }
    expect((counts.schedulesRenamed ?? 0) + (counts.shiftsRenamed ?? 0)).toBeGreaterThan(0);
  });

  it('renames, job title, locale and identifier changes show in the credential list without a newer UpdateDate', () => {
    const changed = people.filter((i) => {
      const was = before.people.get(i.ServiceId);
      return (
        was &&
        was.Status !== 'Former' &&
        i.Status !== 'Former' &&
        (was.LastName !== i.LastName ||
          was.FirstName !== i.FirstName ||
          was.JobTitle !== i.JobTitle ||
          was.Locale !== i.Locale ||
          was.UniqueNumber !== i.UniqueNumber)
      );
    });
    expect(changed.length).toBeGreaterThan(10);
    let untouched = 0;
    for (const ind of changed) {
      for (const c of certs.filter((x) => x.ServiceId === ind.ServiceId)) {
        expect(c.FirstName).toBe(ind.FirstName);
        expect(c.LastName).toBe(ind.LastName);
        expect(c.JobTitle).toBe(ind.JobTitle);
        expect(c.UniqueIdentifier).toBe(ind.UniqueNumber);
        const was = before.certs.get(c.IndividualCertificationId);
        if (was && was.UpdateDate === c.UpdateDate) untouched++;
      }
    }
    // Most of their credentials were not otherwise touched: the service leaves UpdateDate as it was.
    expect(untouched).toBeGreaterThan(10);
    const since = new Date(start);
    const r = data.read('individualCertifications', { updatedSince: since, IncludeDeleted: true }, all);
    const found = new Set(
      r.ok ? r.value.items.map((c) => (c as IndividualCertification).IndividualCertificationId) : [],
    );
    expect(
      certs.some((c) => changed.some((i) => i.ServiceId === c.ServiceId) && !found.has(c.IndividualCertificationId)),
    ).toBe(true);
  });

  it('a changed EmployeeNumber or UniqueNumber finds the individual; the old one no longer does', () => {
    const moved = people.filter((i) => {
      const was = before.people.get(i.ServiceId);
      return was && (was.EmployeeNumber !== i.EmployeeNumber || was.UniqueNumber !== i.UniqueNumber);
    });
    expect(moved.length).toBeGreaterThan(0);
    for (const ind of moved) {
      const was = before.people.get(ind.ServiceId)!;
      if (was.EmployeeNumber !== ind.EmployeeNumber && ind.EmployeeNumber) {
        expect(data.read('individualByEmployeeNumber', { employeeNumber: ind.EmployeeNumber }, all)).toMatchObject({
          ok: true,
          value: { items: [ind] },
        });
        if (was.EmployeeNumber)
          expect(data.read('individualByEmployeeNumber', { employeeNumber: was.EmployeeNumber }, all).ok).toBe(false);
      }
      if (was.UniqueNumber !== ind.UniqueNumber && ind.UniqueNumber) {
        expect(data.read('individualByUniqueIdentifier', { uniqueIdentifier: ind.UniqueNumber }, all)).toMatchObject({
          ok: true,
          value: { items: [ind] },
        });
      }
    }
  });

  it('people who come back from Former bring back their credentials with their old UpdateDate', () => {
    const back = people.filter((i) => before.people.get(i.ServiceId)?.Status === 'Former' && i.Status === 'Active');
    expect(back.length).toBeGreaterThan(0);
    const reappeared = certs.filter((c) => back.some((i) => i.ServiceId === c.ServiceId));
    expect(reappeared.length).toBeGreaterThan(0);
    const listed = data.read('individualCertifications', {}, all);
    const ids = new Set(
      listed.ok ? listed.value.items.map((c) => (c as IndividualCertification).IndividualCertificationId) : [],
    );
    expect(reappeared.filter((c) => !c.IsDeleted).every((c) => ids.has(c.IndividualCertificationId))).toBe(true);
    expect(reappeared.some((c) => ms(c.UpdateDate) < start - DAY)).toBe(true);
  });

  it('time off requests that started more than a year ago are decided late', () => {
    const decided = truth<TimeOffRequest>('timeOffRequests').filter((t) => {
      const was = before.timeOff.get(timeOffKey(t));
      return was && was.Status !== t.Status;
    });
    const old = decided.filter((t) => ms(t.StartDateTime) < now - 366 * DAY);
    expect(old.length).toBeGreaterThan(0);
    for (const t of old) {
      expect(ms(t.ReviewedDateTime ?? t.RequestedDateTime)).toBeGreaterThan(0);
      if (t.Status !== 'Canceled') expect(ms(t.ReviewedDateTime)).toBeGreaterThan(start);
    }
    expect(decided.some((t) => ms(t.StartDateTime) < now - 30 * DAY && ms(t.StartDateTime) >= now - 366 * DAY)).toBe(
      true,
    );
  });

  it('old course records change status or disappear', () => {
    const courses = byId(truth<IndividualCourse>('individualCourses'), (c) => c.IndividualCourseId);
    const cutoff = new Date(now - 60 * DAY).toISOString().slice(0, 10);
    const changed = [...courses.values()].filter(
      (c) => before.courses.has(c.IndividualCourseId) && before.courses.get(c.IndividualCourseId)?.Status !== c.Status,
    );
    expect(changed.length).toBeGreaterThan(0);
    for (const c of changed) expect((c.StartDate ?? '') < cutoff).toBe(true);
    const gone = [...before.courses.keys()].filter((id) => !courses.has(id));
    expect(gone.length).toBe(counts.coursesDeleted);
    // A deleted record is gone from the course list too.
    const victim = before.courses.get(gone[0]!)!;
    const day = victim.StartDate ?? '';
    const r = data.read(
      'individualCourses',
      { startDate: new Date(`${day}T00:00:00Z`), endDate: new Date(`${day}T00:00:00Z`), statusOption: 0 },
      all,
    );
    expect(
      r.ok && r.value.items.some((c) => (c as IndividualCourse).IndividualCourseId === victim.IndividualCourseId),
    ).toBe(false);
  });

  it('assignments change times, vehicles, clock times and day without a change record', () => {
    const quiet = (pick: (was: ShiftAssignment, a: ShiftAssignment) => boolean) =>
      [...assignments.values()].filter((a) => {
        const was = before.assignments.get(a.ShiftAssignmentId);
        return was !== undefined && pick(was, a) && !recorded.has(a.ShiftAssignmentId);
      });
    expect(
      quiet((w, a) => w.StartDateTime === a.StartDateTime && w.EndDateTime !== a.EndDateTime).length +
        quiet(
          (w, a) =>
            ms(w.StartDateTime) - ms(a.StartDateTime) === 3_600_000 ||
            Math.abs(ms(w.StartDateTime) - ms(a.StartDateTime)) === 1_800_000,
        ).length,
    ).toBeGreaterThan(0);
    expect(quiet((w, a) => w.VehicleName !== a.VehicleName).length).toBeGreaterThan(0);
    const corrected = quiet(
      (w, a) =>
        w.ClockOutDateTime != null &&
        (w.ClockInDateTime !== a.ClockInDateTime || w.ClockOutDateTime !== a.ClockOutDateTime),
    );
    expect(corrected.length).toBeGreaterThan(0);
    for (const a of corrected) expect(ms(a.StartDateTime)).toBeLessThan(start);
    const toPast = quiet((w, a) => ms(w.StartDateTime) - ms(a.StartDateTime) >= DAY && ms(a.StartDateTime) < now - DAY);
    expect(toPast.length).toBeGreaterThan(0);
    // The moved assignment is found on its new day, and no longer on its old one.
    const a = toPast[0]!;
    const w = before.assignments.get(a.ShiftAssignmentId)!;
    const on = (iso: string) => {
      const r = data.read(
        'shiftAssignments',
        { StartDate: new Date(ms(iso) - 1000), EndDate: new Date(ms(iso) + 1000) },
        all,
      );
      return r.ok && r.value.items.some((x) => (x as ShiftAssignment).ShiftAssignmentId === a.ShiftAssignmentId);
    };
    expect(on(a.StartDateTime)).toBe(true);
    expect(on(w.StartDateTime)).toBe(false);
  });

  it('a renamed schedule or shift shows its new name on the schedule list and on every assignment of it', () => {
    const schedules = truth<Schedule>('schedules');
    const renamedShifts = new Map<number, string>();
    const renamedSchedules = new Map<number, string>();
    for (const a of assignments.values()) {
      const was = before.assignments.get(a.ShiftAssignmentId);
      if (was && was.ShiftName !== a.ShiftName) renamedShifts.set(a.ShiftId ?? 0, a.ShiftName ?? '');
      if (was && was.ScheduleName !== a.ScheduleName) renamedSchedules.set(a.ScheduleId ?? 0, a.ScheduleName ?? '');
    }
    expect(renamedShifts.size + renamedSchedules.size).toBeGreaterThan(0);
    for (const [id, name] of renamedSchedules) {
      expect(schedules.find((s) => s.ScheduleId === id)?.ScheduleName).toBe(name);
      for (const a of assignments.values()) if (a.ScheduleId === id) expect(a.ScheduleName).toBe(name);
    }
    for (const [id, name] of renamedShifts) {
      expect(schedules.flatMap((s) => s.Shifts ?? []).find((s) => s.ShiftId === id)?.ShiftName).toBe(name);
      for (const a of assignments.values()) if (a.ShiftId === id) expect(a.ShiftName).toBe(name);
    }
  });

  it('deleted form responses and run-log form responses leave their lists', () => {
    const responses = new Set(truth<FormResponse>('formResponses').map((r) => r.ResponseId));
    const runLog = new Set(truth<RunLogFormResponse>('runLogFormResponses').map((r) => r.ResponseId));
    expect([...before.responses].filter((id) => !responses.has(id)).length).toBe(counts.formResponsesDeleted);
    expect([...before.runLog].filter((id) => !runLog.has(id)).length).toBe(counts.runLogResponsesDeleted);
  });

  it('late change records and audit rows appear stamped up to 30 minutes before the advance that reveals them', () => {
    expect(late.changes.length).toBe(counts.lateChangeRecords);
    expect(late.audit.length).toBe(counts.lateAuditRows);
    for (const e of [...late.changes, ...late.audit]) {
      expect(e.stamp).toBeLessThanOrEqual(e.from);
      expect(e.stamp).toBeGreaterThan(e.from - LATE_MS);
    }
    // Served in stamp order, so windows find them.
    const changes = truth<AssignmentChange>('assignmentChanges').map((c) => ms(c.EventTimeStamp));
    expect(changes.every((t, i) => i === 0 || changes[i - 1]! <= t)).toBe(true);
    const audit = truth<FormAudit>('formAudit').map((a) => ms(a.InsertDate));
    expect(audit.every((t, i) => i === 0 || audit[i - 1]! <= t)).toBe(true);
  });

  it('every assignment change record still ends with what GetList shows', () => {
    const last = new Map<number, AssignmentChange>();
    for (const c of truth<AssignmentChange>('assignmentChanges'))
      if (ms(c.EventTimeStamp) > start - LATE_MS) last.set(c.ShiftAssignmentId, c);
    for (const [id, c] of last) {
      if (c.EventType === 'Deleted') expect(assignments.has(id)).toBe(false);
      else if (c.EventType === 'Unassigned') expect(assignments.get(id)?.Assignee ?? null).toBeNull();
      else expect(assignments.get(id)?.Assignee).toEqual(c.Assignee);
    }
  });

  it('paged reads still equal the truth', () => {
    const q = { StartDate: new Date(start - 400 * DAY), EndDate: new Date(now + 400 * DAY) };
    const r = data.read('shiftAssignments', q, all);
    expect(r.ok && r.value.items).toEqual(data.truth('shiftAssignments', q));
    const t = data.read('timeOffRequests', { StartDateTime: q.StartDate, EndDateTime: q.EndDate }, all);
    expect(t.ok && t.value.items.length).toBe(
      (data.truth('timeOffRequests', { StartDateTime: q.StartDate, EndDateTime: q.EndDate }) as unknown[]).length,
    );
  });
});

describe('local times', () => {
  const data = createSandboxData({ seed: 3, size: 'small' });
  const shifts = data.truth('shiftAssignments') as ShiftAssignment[];
  const offset = (s: string) => s.slice(-6);

  it('are written with the offset in force: -06:00 in a Chicago winter, -05:00 in its summer', () => {
    const chicago = shifts.filter((a) => a.ScheduleName?.startsWith('North Station'));
    const offsets = new Set(chicago.map((a) => offset(a.StartDateTime)));
    expect([...offsets].sort()).toEqual(['-05:00', '-06:00']);
    // A shift starting at 07:00 local starts at 07:00 whatever the offset: the UTC hour moves instead.
    const aShift = chicago.filter((a) => a.ShiftName?.startsWith('A Shift'));
    expect(new Set(aShift.map((a) => a.StartDateTime.slice(11, 19)))).toEqual(new Set(['07:00:00']));
    expect(new Set(aShift.map((a) => new Date(ms(a.StartDateTime)).getUTCHours()))).toEqual(new Set([12, 13]));
  });

  it('include night shifts that cross midnight, whose local day is not their UTC day', () => {
    const night = shifts.filter((a) => a.StartDateTime.slice(11, 13) === '19' && a.EndDateTime?.slice(11, 13) === '07');
    expect(night.length).toBeGreaterThan(0);
    for (const a of night.slice(0, 50)) {
      expect(a.EndDateTime?.slice(0, 10)).not.toBe(a.StartDateTime.slice(0, 10));
      // 19:00 at -05:00 or further west is 00:00 UTC or later, on the next UTC day.
      if (/^-0[5-9]/.test(offset(a.StartDateTime)))
        expect(new Date(ms(a.StartDateTime)).toISOString().slice(0, 10)).not.toBe(a.StartDateTime.slice(0, 10));
    }
  });

  it('every date-time in a record carries an offset', () => {
    const dateTimes = (v: unknown): string[] =>
      typeof v === 'string'
        ? /^\d{4}-\d{2}-\d{2}T/.test(v)
          ? [v]
          : []
        : v && typeof v === 'object'
          ? Object.values(v).flatMap(dateTimes)
          : [];
    for (const name of [
      'shiftAssignments',
      'assignmentChanges',
      'timeOffRequests',
      'formAudit',
      'runLogFormResponses',
    ] as const) {
      const texts = (data.truth(name) as unknown[]).slice(0, 500).flatMap(dateTimes);
      expect(texts.length, name).toBeGreaterThan(0);
      for (const t of texts) expect(t, name).toMatch(/[+-]\d{2}:\d{2}$/);
    }
  });
});

describe('determinism', () => {
  it('the same seed and advances give the same data, quiet changes and late stamps included', () => {
    const run = () => {
      const d = createSandboxData({ seed: 9, size: 'tiny' });
      const counts = [d.advance(30).counts, d.advance(48).counts];
      return JSON.stringify([
        counts,
        d.truth('individuals'),
        d.truth('shiftAssignments'),
        d.truth('individualCourses'),
        d.truth('formAudit'),
        d.truth('schedules'),
      ]);
    };
    expect(run()).toBe(run());
  });

  it('lateMs 0 stamps every event inside the period that reveals it', () => {
    const d = createSandboxData({ seed: 9, size: 'tiny', lateMs: 0 });
    const from = d.now().getTime();
    const summary = d.advance(48);
    expect(summary.counts.lateChangeRecords).toBe(0);
    expect(summary.counts.lateAuditRows).toBe(0);
    const changes = d.truth('assignmentChanges') as AssignmentChange[];
    expect(changes.filter((c) => ms(c.EventTimeStamp) > from).length).toBeGreaterThan(0);
  });
});
