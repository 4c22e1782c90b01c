import { describe, expect, it } from 'vitest';
import type {
  AssignmentChange,
  FormAudit,
  Individual,
  IndividualCertification,
  ShiftAssignment,
  TimeOffRequest,
} from '../../src/source/schemas/index.ts';
import { createSandboxData } from '../../src/sandbox/data.ts';
import type { FormResponse } from '../../src/sandbox/store.ts';

const ms = (s: string | null | undefined) => Date.parse(s ?? '');
const page = { offset: 0, limit: 1_000_000 };
const LATE_MS = 30 * 60_000;

describe('the clock', () => {
  const data = createSandboxData({ seed: 21, size: 'small' });
  const before = {
    now: data.now().getTime(),
    people: new Map((data.truth('individuals') as Individual[]).map((i) => [i.ServiceId, i])),
    certs: new Map(
      (data.truth('individualCertifications') as IndividualCertification[]).map((c) => [
        c.IndividualCertificationId,
        c,
      ]),
    ),
    assignments: new Map((data.truth('shiftAssignments') as ShiftAssignment[]).map((a) => [a.ShiftAssignmentId, a])),
    timeOff: data.truth('timeOffRequests') as TimeOffRequest[],
    changes: (data.truth('assignmentChanges') as AssignmentChange[]).length,
    changeList: data.truth('assignmentChanges') as AssignmentChange[],
    changeKeys: new Set((data.truth('assignmentChanges') as AssignmentChange[]).map((c) => JSON.stringify(c))),
    audit: (data.truth('formAudit') as FormAudit[]).length,
  };
  const summary = data.advance(72);
  const after = data.now().getTime();

  it('moves now by the hours asked and reports the changes per kind', () => {
    expect(after - before.now).toBe(72 * 3_600_000);
    expect(summary.now).toBe(data.now().toISOString());
    for (const kind of [
      'individualsHired',
      'individualStatusChanges',
      'credentialRenewals',
      'credentialDeletions',
      'assignmentsCreated',
      'clockIns',
      'clockOuts',
      'timeOffDecisions',
      'timeOffRequests',
      'formResponsesCreated',
      'runLogResponsesEdited',
      'auditRows',
    ])
      expect(summary.counts[kind], kind).toBeGreaterThan(0);
  });

  it('renewals get a new ExpirationDate and UpdateDate = the new clock date, so updatedSince finds them', () => {
    const today = data.now().toISOString().slice(0, 10);
    const changed = (data.truth('individualCertifications') as IndividualCertification[]).filter(
      (c) =>
        before.certs.get(c.IndividualCertificationId)?.ExpirationDate !== c.ExpirationDate &&
        before.certs.has(c.IndividualCertificationId),
    );
    expect(changed.length).toBe(summary.counts.credentialRenewals);
    for (const c of changed) expect(c.UpdateDate).toBe(today);
    const r = data.read(
      'individualCertifications',
      { updatedSince: new Date(`${today}T00:00:00Z`), IncludeDeleted: true },
      page,
    );
    const found = new Set(
      r.ok ? r.value.items.map((c) => (c as IndividualCertification).IndividualCertificationId) : [],
    );
    for (const c of changed)
      if (before.people.get(c.ServiceId ?? 0)?.Status !== 'Former')
        expect(found.has(c.IndividualCertificationId)).toBe(true);
  });

  it('deletions show as IsDeleted with IncludeDeleted=true and leave the default list', () => {
    const deleted = (data.truth('individualCertifications') as IndividualCertification[]).filter(
      (c) => c.IsDeleted && before.certs.get(c.IndividualCertificationId)?.IsDeleted === false,
    );
    expect(deleted.length).toBeGreaterThan(0);
    const r = data.read('individualCertifications', {}, page);
    const listed = new Set(
      r.ok ? r.value.items.map((c) => (c as IndividualCertification).IndividualCertificationId) : [],
    );
    for (const c of deleted) expect(listed.has(c.IndividualCertificationId)).toBe(false);
  });

  it('status moves go Active → LOA → Former, and Former individuals drop out of the certification list', () => {
    const moved = (data.truth('individuals') as Individual[]).filter(
      (i) => before.people.has(i.ServiceId) && before.people.get(i.ServiceId)?.Status !== i.Status,
    );
    // Status moves go forward; people who left may also come back (individualsReturned).
    // One person may leave and come back within the period, which shows as no change at all.
    expect(moved.length).toBeGreaterThan(0);
    expect(moved.length).toBeLessThanOrEqual(
      (summary.counts.individualStatusChanges ?? 0) + (summary.counts.individualsReturned ?? 0),
    );
    for (const i of moved)
      if (i.Status !== 'Active' || before.people.get(i.ServiceId)?.Status !== 'Former')
        expect(before.people.get(i.ServiceId)?.Status).not.toBe('Former');
    const gone = moved.find((i) => i.Status === 'Former');
    if (gone)
      expect(data.read('individualCertifications', { ServiceId: gone.ServiceId }, page)).toMatchObject({
        ok: true,
        value: { items: [] },
      });
  });

  it('new assignment change records are stamped inside the advanced period, and describe what GetList shows', () => {
    // Late records are stamped up to 30 minutes before the period began (see quiet-changes.test.ts).
    const r = data.read(
      'assignmentChanges',
      { StartDate: new Date(before.now - LATE_MS), EndDate: new Date(after) },
      page,
    );
    const older = before.changeList.filter((c) => ms(c.EventTimeStamp) >= before.now - LATE_MS).length;
    const fresh = ((r.ok ? r.value.items : []) as AssignmentChange[]).filter(
      (c) => !before.changeKeys.has(JSON.stringify(c)),
    );
    expect(fresh.length + older).toBe(r.ok ? r.value.items.length : -1);
    expect(fresh.length).toBe((data.truth('assignmentChanges') as AssignmentChange[]).length - before.changes);
    const current = new Map((data.truth('shiftAssignments') as ShiftAssignment[]).map((a) => [a.ShiftAssignmentId, a]));
    const last = new Map<number, AssignmentChange>();
    for (const c of fresh) {
      expect(ms(c.EventTimeStamp)).toBeGreaterThan(before.now - LATE_MS);
      expect(ms(c.EventTimeStamp)).toBeLessThanOrEqual(after);
      last.set(c.ShiftAssignmentId, c);
    }
    for (const [id, c] of last) {
      // "A deleted shift assignment disappears from GetList; its Deleted change record remains."
      if (c.EventType === 'Deleted') expect(current.has(id)).toBe(false);
      else if (c.EventType === 'Unassigned') expect(current.get(id)?.Assignee).toBeNull();
      else expect(current.get(id)?.Assignee).toEqual(c.Assignee);
    }
    expect([...last.values()].some((c) => c.EventType === 'Deleted')).toBe(true);
  });

  it('clock-ins only for shifts whose start passed; clock-outs only after clock-in, never after now', () => {
    for (const a of data.truth('shiftAssignments') as ShiftAssignment[]) {
      const was = before.assignments.get(a.ShiftAssignmentId);
      if (a.ClockInDateTime && !was?.ClockInDateTime) {
        expect(ms(a.StartDateTime)).toBeLessThanOrEqual(after);
        expect(ms(a.ClockInDateTime)).toBeLessThanOrEqual(after);
      }
      if (a.ClockOutDateTime) {
        expect(a.ClockInDateTime).not.toBeNull();
        expect(ms(a.ClockOutDateTime)).toBeLessThanOrEqual(after);
      }
    }
  });

  it('time off decisions set Status, ReviewedBy, ReviewedDateTime and, when approved, ApprovedHours', () => {
    const pendingBefore = before.timeOff.filter((t) => t.Status === 'Pending');
    const now = data.truth('timeOffRequests') as TimeOffRequest[];
    const decided = now.filter(
      (t) =>
        t.Status !== 'Pending' &&
        pendingBefore.some(
          (p) =>
            p.RequestedDateTime === t.RequestedDateTime &&
            p.Employee.ServiceId === t.Employee.ServiceId &&
            p.StartDateTime === t.StartDateTime,
        ),
    );
    expect(decided.length).toBeGreaterThan(0);
    for (const t of decided.filter((d) => d.Status !== 'Canceled')) {
      expect(t.ReviewedBy?.ServiceId).toBeTypeOf('number');
      expect(ms(t.ReviewedDateTime)).toBeGreaterThan(before.now);
      if (t.Status === 'Approved') expect(t.ApprovedHours?.length).toBeGreaterThan(0);
    }
    expect(now.length).toBe(before.timeOff.length + (summary.counts.timeOffRequests ?? 0));
  });

  it('new and edited form responses are found by UpdatedSince, and their audit rows by InsertDate', () => {
    const since = new Date(before.now + 1);
    let found = 0;
    for (const FormId of data.formIds()) {
      const r = data.read(
        'formResponses',
        {
          FormId,
          StartDate: new Date('2000-01-01T00:00:00Z'),
          EndDate: new Date('2100-01-01T00:00:00Z'),
          UpdatedSince: since,
        },
        page,
      );
      found += r.ok ? (r.value.items as FormResponse[]).length : 0;
    }
    expect(found).toBeGreaterThanOrEqual((summary.counts.formResponsesCreated ?? 0) + 1);
    const audit = data.read('formAudit', { StartDate: since, EndDate: new Date(after) }, page);
    expect(audit.ok && audit.value.items.length).toBe(
      (summary.counts.auditRows ?? 0) - (summary.counts.lateAuditRows ?? 0),
    );
    expect((data.truth('formAudit') as FormAudit[]).length).toBe(before.audit + (summary.counts.auditRows ?? 0));
  });

  it('is deterministic given the seed and the sequence of advances', () => {
    const run = () => {
      const d = createSandboxData({ seed: 9, size: 'tiny' });
      d.advance(5);
      d.advance(30);
      return JSON.stringify([
        d.truth('assignmentChanges'),
        d.truth('individualCertifications'),
        d.truth('timeOffRequests'),
        d.truth('formAudit'),
      ]);
    };
    expect(run()).toBe(run());
  });

  it('later reads see the changes: a memoized page is not served stale after an advance', () => {
    const d = createSandboxData({ seed: 2, size: 'tiny' });
    const q = { StartDate: new Date('2026-01-01T00:00:00Z'), EndDate: new Date('2026-12-31T00:00:00Z') };
    const first = d.read('assignmentChanges', q, { offset: 0, limit: 200 });
    const total = (d.truth('assignmentChanges') as AssignmentChange[]).length;
    d.advance(24);
    const grown = (d.truth('assignmentChanges') as AssignmentChange[]).length - total;
    expect(grown).toBeGreaterThan(0);
    const all = d.read('assignmentChanges', q, { offset: 0, limit: 1_000_000 });
    expect(all.ok && first.ok && all.value.items.length - grown).toBeGreaterThanOrEqual(0);
    expect(all.ok && all.value.items.length).toBe((d.truth('assignmentChanges', q) as AssignmentChange[]).length);
  });
});

describe('a period ends when a reader asks', () => {
  // Seed 13 logs a run near the end of its first six days, whose response (and its audit rows) would fall at the end.
  const data = createSandboxData({ seed: 13, size: 'small' });
  data.advance(144);
  const now = data.now().getTime();

  it('stamps every event before the new now, so a read of a window ending at now finds them all', () => {
    const stamps = [
      ...(data.truth('formAudit') as FormAudit[]).map((a) => ms(a.InsertDate)),
      ...(data.truth('assignmentChanges') as AssignmentChange[]).map((c) => ms(c.EventTimeStamp)),
    ];
    expect(stamps.filter((t) => t >= now)).toEqual([]);
    const window = data.read(
      'formAudit',
      { StartDate: new Date(now - 3_600_000).toISOString(), EndDate: data.now().toISOString() },
      page,
    );
    expect(window.ok && window.value.items.length).toBeGreaterThan(0);
  });
});
