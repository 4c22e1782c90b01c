import { describe, expect, it } from 'vitest';
import { endpoints, type EndpointName } from '../../src/resources/index.ts';
import {
  ANSWER_VALUE_SCHEMAS,
  FORM_QUESTION_TYPES,
  type AssignmentChange,
  type FormAudit,
  type Individual,
  type IndividualCertification,
  type IndividualCourse,
  type QuestionType,
  type Schedule,
  type ShiftAssignment,
} from '../../src/source/schemas/index.ts';
import { createSandboxData } from '../../src/sandbox/data.ts';
import type { FormResponse, RunLogFormResponse } from '../../src/sandbox/store.ts';

const small = createSandboxData({ seed: 7, size: 'small' });
const all = <T>(e: EndpointName) => small.truth(e) as T[];

const READ_ENDPOINTS = (Object.keys(endpoints) as EndpointName[]).filter(
  (e) => endpoints[e].method === 'GET' && endpoints[e].response.kind !== 'boolean',
);

describe('generation', () => {
  it('is deterministic by seed: same seed and size give identical data, another seed differs', () => {
    const a = createSandboxData({ seed: 3, size: 'tiny' });
    const b = createSandboxData({ seed: 3, size: 'tiny' });
    const c = createSandboxData({ seed: 4, size: 'tiny' });
    for (const e of READ_ENDPOINTS) expect(JSON.stringify(a.truth(e)), e).toBe(JSON.stringify(b.truth(e)));
    expect(JSON.stringify(a.truth('individuals'))).not.toBe(JSON.stringify(c.truth('individuals')));
    expect(a.now().toISOString()).toBe('2026-01-15T12:00:00.000Z');
  });

  it('is sized: tiny about 50 individuals, small about 500', () => {
    expect(createSandboxData({ size: 'tiny' }).truth('individuals')).toHaveLength(50);
    expect(all('individuals')).toHaveLength(500);
    expect(all('shiftAssignments').length).toBeGreaterThan(10_000);
  });

  it('serves every record in the shape of its endpoint item schema, with canonical names', () => {
    for (const e of READ_ENDPOINTS) {
      const items = small.truth(e);
      expect(items.length, e).toBeGreaterThan(0);
      for (const item of items.slice(0, 300)) {
        const parsed = endpoints[e].item.safeParse(item);
        expect(parsed.success, `${e}: ${parsed.success ? '' : parsed.error.message}`).toBe(true);
      }
    }
  });

  it('never puts an SSN in a record ("never returned")', () => {
    for (const i of all<Individual>('individuals')) expect(i).not.toHaveProperty('SSN');
  });
});

describe('coherence across resources', () => {
  const people = new Map(all<Individual>('individuals').map((i) => [i.ServiceId, i]));

  it('assignees are individuals; non-employee assignees occur only on ride-alongs', () => {
    for (const a of [...all<ShiftAssignment>('shiftAssignments'), ...all<AssignmentChange>('assignmentChanges')]) {
      if (!a.Assignee) continue;
      if (a.Assignee.ServiceId == null) {
        expect(a.Type).toBe('Ride Along');
        expect(a.Assignee.EmployeeNumber).toBeNull();
      } else {
        const p = people.get(a.Assignee.ServiceId);
        expect(p?.EmployeeNumber).toBe(a.Assignee.EmployeeNumber);
      }
    }
  });

  it('credentials reference certifications of the reference list and their holders', () => {
    const certs = new Map(
      all<{ CertificationId: number; CertificationName: string }>('certifications').map((c) => [
        c.CertificationId,
        c.CertificationName,
      ]),
    );
    for (const c of all<IndividualCertification>('individualCertifications')) {
      expect(certs.get(c.CertificationId ?? -1)).toBe(c.CertificationName);
      const holder = people.get(c.ServiceId ?? -1);
      expect(holder?.UniqueNumber).toBe(c.UniqueIdentifier);
      expect(holder?.JobTitleId).toBe(c.JobTitleId);
    }
  });

  it('job titles, departments, locales, work shifts and work statuses come from the reference lists', () => {
    const names = (e: EndpointName, key: string) =>
      new Set(small.truth(e).map((x) => (x as Record<string, unknown>)[key]));
    const titles = new Map(
      all<{ JobTitleId: number; JobTitleName: string }>('jobTitles').map((t) => [t.JobTitleId, t.JobTitleName]),
    );
    const lists = {
      Department: names('departments', 'DepartmentName'),
      Locale: names('locales', 'LocaleName'),
      WorkShift: names('workShifts', 'WorkShiftName'),
      WorkStatus: names('workStatuses', 'WorkStatusName'),
    };
    for (const i of people.values()) {
      expect(titles.get(i.JobTitleId ?? -1)).toBe(i.JobTitle);
      for (const t of i.AdditionalJobTitles ?? []) expect(titles.get(t.JobTitleId ?? -1)).toBe(t.JobTitleName);
      for (const [field, allowed] of Object.entries(lists)) {
        const v = (i as Record<string, unknown>)[field];
        if (v != null) expect(allowed.has(v), `${field} ${String(v)}`).toBe(true);
      }
    }
  });

  it('supervisors are individuals with IsSupervisor = 1, named "Last, First" in SupervisorName', () => {
    const byIndividualId = new Map([...people.values()].map((i) => [i.IndividualId, i]));
    let supervised = 0;
    for (const i of people.values()) {
      if (i.SupervisorId == null) continue;
      supervised++;
      const sup = byIndividualId.get(i.SupervisorId);
      expect(sup?.IsSupervisor).toBe(1);
      expect(i.SupervisorName).toBe(`${sup?.LastName}, ${sup?.FirstName}`);
    }
    expect(supervised).toBeGreaterThan(400);
    expect(all<{ IsSupervisor: number }>('supervisors').every((s) => s.IsSupervisor === 1)).toBe(true);
  });

  it('RequirementsMet is true exactly when no requirement is Expired or Missing', () => {
    const statuses = new Set<string>();
    for (const s of small.truth('requiredCertificationStatus') as {
      Employment: { ServiceId: number };
      CredentialRequirements: {
        JobTitle: { JobTitleId: number };
        RequirementsMet: boolean;
        Requirements: { RequirementStatus: string; FulfillingCertification: unknown }[];
      }[];
    }[]) {
      const p = people.get(s.Employment.ServiceId);
      const titleIds = [p?.JobTitleId, ...(p?.AdditionalJobTitles ?? []).map((t) => t.JobTitleId)];
      for (const entry of s.CredentialRequirements) {
        expect(titleIds).toContain(entry.JobTitle.JobTitleId);
        const bad = entry.Requirements.some(
          (r) => r.RequirementStatus === 'Expired' || r.RequirementStatus === 'Missing',
        );
        expect(entry.RequirementsMet).toBe(!bad);
        for (const r of entry.Requirements) {
          statuses.add(r.RequirementStatus);
          // "present when RequirementStatus is not Missing; null when Missing"
          expect(r.FulfillingCertification === null).toBe(r.RequirementStatus === 'Missing');
        }
      }
    }
    expect([...statuses].sort()).toEqual(['Current', 'Expired', 'Missing', 'NotMaintained']);
  });

  it('schedules own the shifts that assignments reference', () => {
    const shifts = new Map<number, Set<number>>();
    for (const s of all<Schedule>('schedules'))
      shifts.set(s.ScheduleId, new Set((s.Shifts ?? []).map((x) => x.ShiftId)));
    for (const a of all<ShiftAssignment>('shiftAssignments'))
      expect(shifts.get(a.ScheduleId ?? -1)?.has(a.ShiftId ?? -1)).toBe(true);
  });

  it('forms use all 22 generic question types, each AnswerValue in the shape the spec table gives', () => {
    const seen = new Set<string>();
    for (const r of all<FormResponse>('formResponses')) {
      for (const a of r.Answers ?? []) {
        seen.add(a.QuestionType ?? '');
        if (a.AnswerValue === null) continue;
        const schema = ANSWER_VALUE_SCHEMAS[a.QuestionType as QuestionType];
        expect(schema.safeParse(a.AnswerValue).success, `${a.QuestionType}: ${JSON.stringify(a.AnswerValue)}`).toBe(
          true,
        );
      }
    }
    expect([...seen].sort()).toEqual([...FORM_QUESTION_TYPES].sort());
  });

  it('run-log responses carry RunDetails with crew, and Run Log Crew answers name the crew', () => {
    for (const r of all<RunLogFormResponse>('runLogFormResponses')) {
      expect(r.AttachedToType).toBe('RunLog');
      const crew = r.RelatedRun?.Crew ?? [];
      expect(crew.length).toBeGreaterThanOrEqual(2);
      const crewAnswer = r.Answers?.find((a) => a.QuestionType === 'Run Log Crew');
      if (crewAnswer?.AnswerValue != null) expect(crewAnswer.AnswerValue).toEqual(crew);
      for (const c of crew) expect(people.get(c.ServiceId ?? -1)?.LastName).toBe(c.LastName);
    }
  });

  it('form audit rows are one item per form-response answer', () => {
    const fresh = createSandboxData({ seed: 7, size: 'tiny' });
    const rows = fresh.truth('formAudit') as FormAudit[];
    const responses = [
      ...(fresh.truth('formResponses') as FormResponse[]),
      ...(fresh.truth('runLogFormResponses') as RunLogFormResponse[]),
    ];
    for (const r of responses) {
      const mine = rows.filter((a) => a.ResponseId === r.ResponseId);
      expect(mine.map((a) => a.ItemId).sort()).toEqual((r.Answers ?? []).map((a) => a.QuestionId).sort());
      for (const row of mine) {
        const answer = r.Answers?.find((a) => a.QuestionId === row.ItemId);
        // "AnswerId (int; -1 means no response)"
        expect(row.AnswerId === -1).toBe(answer?.AnswerValue === null);
      }
    }
    expect(rows).toHaveLength(responses.reduce((n, r) => n + (r.Answers?.length ?? 0), 0));
  });
});

describe('messy where real data is', () => {
  const assignments = all<ShiftAssignment>('shiftAssignments');
  const people = all<Individual>('individuals');

  it('has open shifts (Assignee null) and ride-alongs with non-employee assignees', () => {
    expect(assignments.some((a) => a.Assignee === null)).toBe(true);
    expect(
      assignments.some(
        (a) => a.Type === 'Ride Along' && a.Assignee?.ServiceId === null && a.Assignee.EmployeeNumber === null,
      ),
    ).toBe(true);
  });

  it('has deleted and unmaintained credentials', () => {
    const certs = all<IndividualCertification>('individualCertifications');
    expect(certs.some((c) => c.IsDeleted === true)).toBe(true);
    expect(certs.some((c) => c.IsMaintained === false && !c.IsDeleted)).toBe(true);
  });

  it('has multi-line comments with CRLF and non-ASCII names', () => {
    const comments = all<FormResponse>('formResponses').flatMap((r) =>
      (r.Answers ?? []).filter((a) => a.QuestionType === 'Comments Box'),
    );
    expect(comments.some((a) => typeof a.AnswerValue === 'string' && a.AnswerValue.includes('\r\n'))).toBe(true);
    const names = people.map((p) => `${p.FirstName} ${p.LastName}`).join('|');
    for (const n of ['Zoë', 'Nuñez', 'Łukasz', '王']) expect(names).toContain(n);
  });

  it('leaves fields that do not apply out of course records (absent keys, not null)', () => {
    const courses = all<IndividualCourse>('individualCourses');
    for (const key of ['Credit', 'CourseId', 'ExamStartDate', 'ExamEndDate']) {
      expect(
        courses.some((c) => !(key in c)),
        key,
      ).toBe(true);
      expect(
        courses.some((c) => key in c),
        key,
      ).toBe(true);
      expect(
        courses.some((c) => key in c && (c as Record<string, unknown>)[key] === null),
        key,
      ).toBe(false);
    }
  });

  it('writes dates as the spec says: date-only for individuals and credentials, date-times with offsets for shifts', () => {
    const dateOnly = /^\d{4}-\d{2}-\d{2}$/;
    for (const p of people) for (const v of [p.DateOfBirth, p.HireDate]) if (v != null) expect(v).toMatch(dateOnly);
    for (const c of all<IndividualCertification>('individualCertifications'))
      for (const v of [c.UpdateDate, c.ActivationDate, c.ExpirationDate]) if (v != null) expect(v).toMatch(dateOnly);
    const offsets = new Set(assignments.map((a) => a.StartDateTime.slice(19)));
    expect(offsets).toContain('-05:00');
    expect(offsets).toContain('+01:00');
    for (const a of assignments) expect(Date.parse(a.EndDateTime ?? '')).toBeGreaterThan(Date.parse(a.StartDateTime));
  });

  it('past shifts are clocked in and out; a shift under way may be clocked in only', () => {
    const now = small.now().getTime();
    for (const a of assignments) {
      if (a.ClockInDateTime) expect(Date.parse(a.StartDateTime)).toBeLessThanOrEqual(now + 15 * 60_000);
      if (a.ClockOutDateTime) expect(a.ClockInDateTime).not.toBeNull();
      if (Date.parse(a.StartDateTime) > now) expect(a.ClockInDateTime).toBeNull();
    }
    expect(assignments.some((a) => a.ClockInDateTime && !a.ClockOutDateTime)).toBe(true);
  });
});
