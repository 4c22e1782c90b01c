import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Warehouse } from '../../src/warehouse/connection.ts';
import { readRows } from '../support/rows.ts';
import { writePage } from '../../src/warehouse/upsert.ts';
import { hashKey, keyText } from '../../src/warehouse/record-keys.ts';
import { mapItem } from '../../src/warehouse/fingerprint.ts';
import { snake } from '../../src/warehouse/mapper.ts';
import { endpoints, streams } from '../../src/resources/index.ts';
import { migratedWarehouse, parsed, raw, targetOf, type ResourceName } from './fixtures.ts';

let wh: Warehouse;
const company = 'acme';
const syncedAt = new Date('2024-06-10T00:00:00Z');

beforeAll(async () => {
  wh = await migratedWarehouse();
});
afterAll(async () => {
  await wh?.close();
});

async function write(name: ResourceName, extras?: Record<string, unknown>) {
  return writePage(wh, {
    target: targetOf(name),
    companyKey: company,
    items: [parsed(name)],
    syncedAt,
    stream: name,
    extras,
  });
}

async function one(table: string) {
  const rows = await readRows(wh, table, company);
  expect(rows).toHaveLength(1);
  return rows[0]!;
}

describe('snake case', () => {
  it('follows the service names', () => {
    expect(snake('ServiceId')).toBe('service_id');
    expect(snake('DestinationGPSLocation')).toBe('destination_gps_location');
    expect(snake('HomeAddressLine1')).toBe('home_address_line1');
    expect(snake('Shift Name')).toBe('shift_name');
  });
});

describe('every resource maps to its table', () => {
  it('has a target for every synced endpoint', () => {
    for (const name of Object.keys(raw)) expect(endpoints[name as ResourceName].name).toBe(name);
    expect(streams.map((s) => s.endpoint.name).sort()).toEqual(Object.keys(raw).sort());
  });

  it('individuals: flattening, aliases, child job titles, _extra, no SSN anywhere', async () => {
    await write('individuals');
    const row = await one('individuals');
    expect(row).toMatchObject({
      company_key: company,
      service_id: 9001,
      individual_id: 501,
      supervisor_name: 'Kim, Lee',
      date_of_birth: '1988-04-02',
      home_address_line1: '1 Main St',
      is_employee: 1,
      exclude_from_verification_monitoring: false,
      _extra: { BadgeColor: 'blue' },
      _deleted_at: null,
    });
    expect(row._synced_at).toEqual(syncedAt);
    expect(JSON.stringify(row).toLowerCase()).not.toContain('123456789');
    const titles = await readRows(wh, 'individual_job_titles', company);
    expect(titles.map((t) => [t.service_id, t.job_title_id, t.job_title_name])).toEqual([
      [9001, 4, 'Field Training Officer'],
      [9001, 5, 'Dispatcher'],
    ]);
    const history = await readRows(wh, 'individuals_history', company);
    expect(JSON.stringify(history)).not.toContain('123456789');
  });

  it('SSN is dropped even when nested in unmapped fields', () => {
    const m = mapItem(targetOf('individuals'), company, {
      ...parsed('individuals'),
      Other: { ssn: '987654321', keep: 1 },
    });
    expect(JSON.stringify(m.row)).not.toContain('987654321');
    expect(m.row._extra).toEqual({ BadgeColor: 'blue', Other: { keep: 1 } });
  });

  it('supervisors', async () => {
    await write('supervisors');
    expect(await one('supervisors')).toMatchObject({ service_id: 8000, individual_id: 400, is_supervisor: 1 });
  });

  it('individual certifications keep dates as dates and list fields as JSON', async () => {
    await write('individualCertifications');
    expect(await one('individual_certifications')).toMatchObject({
      individual_certification_id: 7001,
      activation_date: '2023-01-01',
      expiration_date: '2025-01-01',
      is_primary: true,
      additional_job_titles: [{ JobTitleId: 4, JobTitleName: 'Field Training Officer' }],
    });
    expect(await readRows(wh, 'individual_certifications_history', company)).toHaveLength(1);
  });

  it('pending certifications', async () => {
    await write('pendingCertifications');
    expect(await one('pending_certifications')).toMatchObject({
      verification_status: 'Failed',
      issuing_body_failure_reason: ['number not found', 'name mismatch'],
    });
  });

  it('required certification status: one row per employee, one per requirement', async () => {
    await write('requiredCertificationStatus');
    expect(await one('required_certification_status')).toMatchObject({
      employment_service_id: 9001,
      employment_employee_number: 'E-100',
    });
    const reqs = await readRows(wh, 'required_certification_requirements', company);
    const summary = reqs
      .map((r) => [
        r.job_title_job_title_id,
        r.locale_locale_id,
        r.requirement,
        r.requirement_status,
        r.requirements_met,
        r.fulfilling_certification_certification_number,
      ])
      .sort((a, b) => String(a).localeCompare(String(b)));
    expect(summary).toEqual([
      [3, 2, 'CPR', 'Missing', false, null],
      [3, 2, 'Paramedic License', 'Current', false, 'PM-1'],
      [5, null, null, null, true, null],
    ]);
  });

  it('shift assignments: Assignee flattened, instants kept, unknown nested field in _extra', async () => {
    await write('shiftAssignments');
    const row = await one('shift_assignments');
    expect(row).toMatchObject({
      assignee_service_id: 9001,
      assignee_first_name: 'Dana',
      vehicle_name: 'Medic 1',
      _extra: { Assignee: { Pager: '77' } },
    });
    expect(row.start_date_time).toEqual(new Date('2024-06-01T12:00:00Z'));
    expect(row.clock_in_date_time).toEqual(new Date('2024-06-01T11:55:00Z'));
  });

  it('assignment changes get a hashed key', async () => {
    await write('assignmentChanges');
    const row = await one('assignment_changes');
    expect(row._key).toMatch(/^[0-9a-f]{32}$/);
    expect(row).toMatchObject({ event_type: 'Assigned', shift_assignment_id: 3001, assignee_service_id: 9001 });
  });

  it('schedules and their shifts', async () => {
    await write('schedules');
    expect(await one('schedules')).toMatchObject({ schedule_id: 20, schedule_name: 'North Station' });
    expect((await readRows(wh, 'schedule_shifts', company)).map((s) => s.shift_name)).toEqual(['Day A', 'Night A']);
  });

  it('time off requests: Employee alias, approved hours as child rows', async () => {
    await write('timeOffRequests');
    const row = await one('time_off_requests');
    expect(row).toMatchObject({
      employee_service_id: 9001,
      employee_unique_identifier: 'U-100',
      reviewed_by_service_id: 8000,
      requested_hours: '20.5',
    });
    const hours = await readRows(wh, 'time_off_approved_hours', company);
    expect(hours.map((h) => [h.time_off_request_key, h._ord, h.approved_leave_policy, h.approved_hours])).toEqual([
      [row._key, 0, 'PTO', '16'],
      [row._key, 1, 'Sick', '4.5'],
    ]);
  });

  it('individual courses', async () => {
    await write('individualCourses');
    expect(await one('individual_courses')).toMatchObject({
      individual_course_id: 'C-77',
      credit: '1.5',
      start_date: '2024-03-01',
    });
  });

  it('run-log forms', async () => {
    await write('runLogForms');
    expect(await one('run_log_forms')).toMatchObject({ form_id: 60, form_type: 'Debrief', archived: false });
  });

  it('form audit: InsertBy read as AuditIndividual', async () => {
    await write('formAudit');
    expect(await one('form_audit')).toMatchObject({
      response_id: 801,
      audit_individual_unique_identifier: 'U-100',
      run_id: 'R-1',
    });
  });

  it('form responses: envelope fills form_id and the forms table; answers one row each', async () => {
    await write('formResponses', { FormId: 44, FormTitle: 'Exposure report' });
    expect(await one('forms')).toMatchObject({ form_id: 44, form_title: 'Exposure report' });
    const row = await one('form_responses');
    expect(row).toMatchObject({
      form_id: 44,
      submitted_by_service_id: 9001,
      related_employee_health_event_health_event_id: 3,
      related_employee_health_event_related_individual_service_id: 9001,
      related_shift_shift_name: 'Day A',
    });
    expect(row.related_shift_shift_date).toEqual(new Date('2024-06-01T12:00:00Z'));
    const answers = await readRows(wh, 'form_response_answers', company);
    expect(answers.map((a) => [a.question_id, a.answer_value, a.answer_value_matches_type])).toEqual([
      [1, 'all good', true],
      [2, 3, true],
      [3, true, true],
      [4, '2024-06-01T18:30:00+00:00', true],
      [5, ['a', 'b'], true],
      [6, { SelectedValue: 'x', OtherAnswerValue: null }, true],
      [7, 'three', false],
    ]);
  });

  it('run-log form responses: RelatedRun flattened, crew and answers as child rows', async () => {
    await write('runLogFormResponses', { RunLogTypeId: 2, RunLogTypeName: 'ALS', RunLogFormType: 'Debrief' });
    expect(await one('run_log_form_responses')).toMatchObject({
      run_log_type_id: 2,
      run_log_form_type: 'Debrief',
      related_run_run_id: 'R-1',
      related_run_destination_gps_location: '41.0,-89.0',
      related_run_incident_address_city: 'Springfield',
      related_run_locale_business_id: 'BU-N',
      related_run_started_by_service_id: 0,
      related_run_matched_rules: ['rule-1'],
    });
    const crew = await readRows(wh, 'run_log_crew', company);
    expect(crew.map((c) => [c._ord, c.crew_role, c.service_id])).toEqual([
      [0, 'Lead', 9001],
      [1, 'Driver', null],
    ]);
    expect(await one('run_log_form_response_answers')).toMatchObject({
      question_type: 'Run Log Crew',
      answer_value: { anything: 1 },
    });
  });

  it.each([
    'certifications',
    'workStatuses',
    'departments',
    'workShifts',
    'jobTitles',
    'locales',
  ] satisfies ResourceName[])('reference list %s', async (name) => {
    await write(name);
    const table = targetOf(name).table;
    const row = await one(table);
    const values = Object.values(raw[name]);
    expect(row[targetOf(name).key[0]!]).toBe(values[0]);
    expect(Object.values(row)).toContain(values[1]);
  });
});

describe('values as the service wrote them', () => {
  const local = 'local';
  const writeLocal = (name: ResourceName, items: Record<string, unknown>[]) =>
    writePage(wh, { target: targetOf(name), companyKey: local, items, syncedAt, stream: name });

  it('a night shift keeps the day and offset it was written with, beside the instant', async () => {
    await writeLocal('shiftAssignments', [
      parsed('shiftAssignments', {
        StartDateTime: '2024-06-01T19:00:00-05:00',
        EndDateTime: '2024-06-02T06:00:00.1234567-0500',
        ClockInDateTime: null,
      }),
    ]);
    const [row] = await readRows(wh, 'shift_assignments', local);
    expect(row).toMatchObject({
      start_date_time_local_date: '2024-06-01',
      start_date_time_utc_offset: '-05:00',
      end_date_time_local_date: '2024-06-02',
      end_date_time_utc_offset: '-05:00',
      clock_in_date_time: null,
      clock_in_date_time_local_date: null,
      clock_in_date_time_utc_offset: null,
    });
    expect(row!.start_date_time).toEqual(new Date('2024-06-02T00:00:00Z'));
  });

  it('a date sent as a date-time keeps its full value beside the day written; a bare date has none', async () => {
    const full = '2024-03-01T23:30:00.1234567+10:00';
    await writeLocal('individualCourses', [parsed('individualCourses', { StartDate: full, EndDate: '2024-03-02' })]);
    const [row] = await readRows(wh, 'individual_courses', local);
    expect(row).toMatchObject({
      start_date: '2024-03-01',
      start_date_utc_offset: '+10:00',
      end_date: '2024-03-02',
      end_date_instant: null,
      end_date_utc_offset: null,
    });
    expect(row!.start_date_instant).toEqual(new Date('2024-03-01T13:30:00.123Z'));
  });

  it('reads the offset a time was written with, Z as +00:00, and none when it has none', () => {
    const offsetOf = (StartDateTime: string) => {
      const { row } = mapItem(targetOf('shiftAssignments'), local, parsed('shiftAssignments', { StartDateTime }));
      return [row.start_date_time_local_date, row.start_date_time_utc_offset];
    };
    expect(offsetOf('2024-06-01T19:00:00Z')).toEqual(['2024-06-01', '+00:00']);
    expect(offsetOf('2024-06-01 19:00:00.5+0530')).toEqual(['2024-06-01', '+05:30']);
    expect(offsetOf('2024-06-01T19:00-03:00')).toEqual(['2024-06-01', '-03:00']);
    expect(offsetOf('2024-06-01T19:00:00')).toEqual(['2024-06-01', null]);
    expect(offsetOf('2024-06-01')).toEqual(['2024-06-01', null]);
  });

  it('a field of the item named like a derived column does not fill it', () => {
    const m = mapItem(targetOf('shiftAssignments'), local, {
      ...parsed('shiftAssignments'),
      StartDateTimeLocalDate: '1999-01-01',
    });
    expect(m.row.start_date_time_local_date).toBe('2024-06-01');
    expect(m.row._extra).toMatchObject({ StartDateTimeLocalDate: '1999-01-01' });
  });

  it('a child element without its key goes to sync_rejects; the item and its other children are written', async () => {
    const item = parsed('individuals', {
      ServiceId: 9100,
      AdditionalJobTitles: [
        { JobTitleId: null, JobTitleName: 'Nameless' },
        { JobTitleId: 5, JobTitleName: 'Dispatcher' },
      ],
    });
    await writeLocal('individuals', [item]);
    const titles = await readRows(wh, 'individual_job_titles', local);
    expect(titles.map((t) => [t.service_id, t.job_title_id])).toEqual([[9100, 5]]);
    expect((await readRows(wh, 'individuals', local)).map((r) => r.service_id)).toEqual([9100]);
    const rejects =
      await wh.sql`select stream, raw, reason from ${wh.sql(wh.schema)}.sync_rejects where company_key = ${local}`;
    expect(rejects).toHaveLength(1);
    expect(rejects[0]).toMatchObject({
      stream: 'individuals',
      reason: 'individual_job_titles: job_title_id is null',
      raw: { parent: { service_id: 9100 }, AdditionalJobTitles: { JobTitleId: null, JobTitleName: 'Nameless' } },
    });
  });

  it('two requirements worded alike in one entry stay two rows', () => {
    const cpr = { Requirement: 'CPR', RequirementStatus: 'Missing', FulfillingCertification: null };
    const item = parsed('requiredCertificationStatus', {
      CredentialRequirements: [
        {
          JobTitle: { JobTitleId: 3, JobTitleName: 'Paramedic' },
          RequirementsMet: false,
          Requirements: [cpr, { ...cpr, RequirementStatus: 'Expired' }],
        },
      ],
    });
    const m = mapItem(targetOf('requiredCertificationStatus'), local, item);
    const rows = m.children[0]!;
    expect(rows.map((r) => r.requirement_status)).toEqual(['Missing', 'Expired']);
    expect(new Set(rows.map((r) => r._key)).size).toBe(2);
    // The first keeps the key it always had, so rows already in the warehouse keep theirs.
    const single = mapItem(
      targetOf('requiredCertificationStatus'),
      local,
      parsed('requiredCertificationStatus', {
        CredentialRequirements: [
          { JobTitle: { JobTitleId: 3, JobTitleName: 'Paramedic' }, RequirementsMet: false, Requirements: [cpr] },
        ],
      }),
    );
    expect(single.children[0]![0]!._key).toBe(rows[0]!._key);
  });
});

describe('record keys', () => {
  it('name a row as its stored key columns read back name it, whatever the characters of the key', () => {
    // lockAndRead names a stored row by the JSON of its key columns as text: a page's keys must be named alike.
    for (const v of ['plain', 'with "quotes" and \\ backslash', 'Łukasz\u0001', '', 42, 0]) {
      expect(keyText({ k: v }, ['k'])).toBe(JSON.stringify([String(v)]));
    }
    expect(keyText({ k: null }, ['k'])).toBe('[null]');
    expect(keyText({ a: 1, b: 'x' }, ['a', 'b'])).toBe('["1","x"]');
  });

  it('hash one instant written with two offsets alike, and text that only looks like a date as written', () => {
    const fields = ['Id', 'At'] as const;
    expect(hashKey({ Id: 1, At: '2024-06-01T06:00:00-06:00' }, fields)).toBe(
      hashKey({ Id: 1, At: '2024-06-01T12:00:00Z' }, fields),
    );
    expect(hashKey({ Id: 1, At: '2024-06-01T12:00:00Z' }, fields)).toBe('75996ecb4e73dd1227799b3f1b291c42');
    expect(hashKey({ Id: 1, At: '2024-06-01 a note' }, fields)).not.toBe(
      hashKey({ Id: 1, At: '2024-06-01 another' }, fields),
    );
  });

  it('take the first identifying field of alternatives that is present, at any depth', () => {
    const fields = [['Employee.ServiceId', 'Employee.EmployeeNumber'], 'Day'] as const;
    const byNumber = hashKey({ Employee: { ServiceId: null, EmployeeNumber: 'E7' }, Day: '2024-06-01' }, fields);
    expect(byNumber).toBe(hashKey({ Employee: { EmployeeNumber: 'E7' }, Day: '2024-06-01' }, fields));
    expect(byNumber).not.toBe(hashKey({ Employee: { ServiceId: 7, EmployeeNumber: 'E7' }, Day: '2024-06-01' }, fields));
  });
});
