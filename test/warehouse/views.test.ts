import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Warehouse } from '../../src/warehouse/connection.ts';
import { markDeletedByKey } from '../../src/warehouse/deletions.ts';
import { writePage } from '../../src/warehouse/upsert.ts';
import { migratedWarehouse, parsed, targetOf, type ResourceName } from './fixtures.ts';

let wh: Warehouse;
const company = 'views';
const t0 = new Date('2024-05-01T00:00:00Z');

async function write(
  target: ResourceName,
  items: Record<string, unknown>[],
  syncedAt = t0,
  extras?: Record<string, unknown>,
) {
  await writePage(wh, { target: targetOf(target), companyKey: company, items, syncedAt, stream: target, extras });
}

function inDays(days: number): string {
  return new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);
}

const noon = (date: string) => `${date}T12:00:00+00:00`;
const shift = (id: number, date: string, o: Record<string, unknown> = {}) =>
  parsed('shiftAssignments', {
    ShiftAssignmentId: id,
    StartDateTime: noon(date),
    EndDateTime: null,
    ClockInDateTime: null,
    ...o,
  });

beforeAll(async () => {
  wh = await migratedWarehouse();
  const cred = (id: number, name: string, o: Record<string, unknown>) =>
    parsed('individualCertifications', { IndividualCertificationId: id, CertificationName: name, ...o });
  await write('individualCertifications', [
    cred(1, 'Paramedic License', { ActivationDate: '2023-01-01', ExpirationDate: '2025-01-01' }),
    cred(2, 'EVOC', { ExpirationDate: inDays(10) }),
    cred(3, 'ACLS', { ExpirationDate: inDays(45) }),
    cred(4, 'PALS', { ExpirationDate: inDays(80) }),
    cred(5, 'PHTLS', { ExpirationDate: inDays(200) }),
    cred(6, 'Hazmat', { ExpirationDate: inDays(5), IsDeleted: true }),
    cred(7, 'BLS', { ExpirationDate: inDays(-1) }),
  ]);
  // The paramedic license was renewed, as seen by the sync of 1 March 2025.
  await write(
    'individualCertifications',
    [cred(1, 'Paramedic License', { ActivationDate: '2025-01-01', ExpirationDate: '2099-01-01' })],
    new Date('2025-03-01T00:00:00Z'),
  );
  await write('requiredCertificationStatus', [parsed('requiredCertificationStatus')]);

  const assignee = { ServiceId: 9001, EmployeeNumber: 'E-100', FirstName: 'Dana', LastName: 'Reyes' };
  await write('shiftAssignments', [
    shift(10, '2024-06-01', { Assignee: null, ShiftName: 'Day A' }),
    shift(11, '2024-06-01', { Assignee: null, ShiftName: 'Night A' }),
    shift(12, '2024-06-02', { Assignee: null, ShiftName: 'Day A' }),
    shift(13, '2024-06-02', { Assignee: null, ShiftName: 'Gone' }),
    // A night shift starting 19:00 at UTC-05:00 is on 2 June where it is worked, though 3 June in UTC.
    shift(14, '2024-06-02', {
      Assignee: null,
      ShiftName: 'Night B',
      StartDateTime: '2024-06-02T19:00:00-05:00',
      EndDateTime: '2024-06-03T06:00:00-05:00',
    }),
    shift(20, '2024-06-01', { Assignee: assignee, ClockInDateTime: noon('2024-06-01') }),
    shift(21, '2025-02-01', { Assignee: assignee, ClockInDateTime: noon('2025-02-01') }),
    shift(22, '2025-04-01', { Assignee: assignee, ClockInDateTime: noon('2025-04-01') }),
    shift(23, '2025-04-02', { Assignee: assignee }),
  ]);
  await markDeletedByKey(wh, {
    target: targetOf('shiftAssignments'),
    companyKey: company,
    keys: [{ shift_assignment_id: 13 }],
  });

  const leave = (o: Record<string, unknown>) => parsed('timeOffRequests', o);
  await write('timeOffRequests', [
    leave({}),
    leave({
      StartDateTime: '2024-07-20T00:00:00+00:00',
      ApprovedHours: [{ ApprovedLeavePolicy: 'PTO', ApprovedLeaveType: 'Vacation', ApprovedHours: 8 }],
    }),
    leave({
      StartDateTime: '2024-08-02T00:00:00+00:00',
      ApprovedHours: [{ ApprovedLeavePolicy: 'PTO', ApprovedHours: 2 }],
    }),
    // Starts on 31 July where it is taken, 1 August in UTC.
    leave({
      StartDateTime: '2024-07-31T20:00:00-06:00',
      ApprovedHours: [{ ApprovedLeavePolicy: 'Comp', ApprovedHours: 3 }],
    }),
    leave({
      StartDateTime: '2024-07-25T00:00:00+00:00',
      Status: 'Denied',
      ApprovedHours: [{ ApprovedLeavePolicy: 'PTO', ApprovedHours: 100 }],
    }),
  ]);

  await write('formResponses', [parsed('formResponses')], t0, { FormId: 44, FormTitle: 'Exposure' });
  await write('formResponses', [parsed('formResponses', { ResponseId: 802 })], t0, {
    FormId: 44,
    FormTitle: 'Exposure',
  });
  await markDeletedByKey(wh, { target: targetOf('formResponses'), companyKey: company, keys: [{ response_id: 802 }] });
  await write('runLogFormResponses', [parsed('runLogFormResponses')], t0, {
    RunLogTypeId: 2,
    RunLogFormType: 'Debrief',
  });
});
afterAll(async () => {
  await wh?.close();
});

const view = (name: string, order: string) =>
  wh.sql.unsafe(`select * from workforce.${name} where company_key = $1 order by ${order}`, [company]);

describe('analyst views', () => {
  it('v_credentials_expiring buckets live credentials by 30/60/90 days', async () => {
    const rows = await view('v_credentials_expiring', 'expiration_date');
    expect(rows.map((r) => [r.certification_name, r.bucket])).toEqual([
      ['EVOC', 30],
      ['ACLS', 60],
      ['PALS', 90],
    ]);
    expect(rows[0]!.days_left).toBe(10);
  });

  it('v_requirements_not_met names the requirement and its status', async () => {
    const rows = await view('v_requirements_not_met', 'requirement');
    expect(
      rows.map((r) => [r.service_id, r.job_title_name, r.locale_name, r.requirement, r.requirement_status]),
    ).toEqual([[9001, 'Paramedic', 'North', 'CPR', 'Missing']]);
  });

  it('v_open_shifts counts open shifts by schedule and the local day they start, without deleted ones', async () => {
    const rows = await view('v_open_shifts', 'day');
    expect(rows.map((r) => [r.schedule_id, r.day, r.open_shifts, r.shift_names])).toEqual([
      [20, '2024-06-01', 2, 'Day A, Night A'],
      [20, '2024-06-02', 2, 'Day A, Night B'],
    ]);
  });

  it('v_shifts_without_current_credential uses the credential version known on the shift day', async () => {
    const rows = await view('v_shifts_without_current_credential', 'shift_assignment_id, requirement');
    expect(rows.map((r) => [r.shift_assignment_id, r.requirement, r.reason])).toEqual([
      [20, 'CPR', 'Missing'],
      [21, 'CPR', 'Missing'],
      [21, 'Paramedic License', 'Expired'],
      [22, 'CPR', 'Missing'],
    ]);
    expect(rows[2]!.credential_expiration_date).toBe('2025-01-01');
  });

  it('v_approved_leave_hours sums approved hours by policy and the local month of the request start', async () => {
    const rows = await view('v_approved_leave_hours', 'month, approved_leave_policy');
    expect(rows.map((r) => [r.approved_leave_policy, r.month, r.hours, r.requests])).toEqual([
      ['Comp', '2024-07-01', '3', 1],
      ['PTO', '2024-07-01', '24', 2],
      ['Sick', '2024-07-01', '4.5', 1],
      ['PTO', '2024-08-01', '2', 1],
    ]);
  });

  it('v_form_answers types each answer by its question type', async () => {
    const rows = await view('v_form_answers', 'form_kind, response_id, question_id');
    expect(
      rows.map((r) => [
        r.form_kind,
        r.response_id,
        r.question_id,
        r.answer_text,
        r.answer_number,
        r.answer_boolean,
        r.answer_json,
      ]),
    ).toEqual([
      ['form', 801, 1, 'all good', null, null, null],
      ['form', 801, 2, null, '3', null, null],
      ['form', 801, 3, null, null, true, null],
      ['form', 801, 4, null, null, null, null],
      ['form', 801, 5, null, null, null, ['a', 'b']],
      ['form', 801, 6, 'x', null, null, { SelectedValue: 'x', OtherAnswerValue: null }],
      ['form', 801, 7, null, null, null, null],
      ['run_log', 901, 1, null, null, null, { anything: 1 }],
    ]);
    expect(rows[3]!.answer_timestamp).toEqual(new Date('2024-06-01T18:30:00Z'));
    expect(rows[0]!.form_id).toBe(44);
  });
});
