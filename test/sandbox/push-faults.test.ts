import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.ts';
import { call, truth, v2 } from './http-helpers.ts';

const INSERT = v2('/Individual/Insert');
const VALIDATE = v2('/IndividualCertification/ValidateSubmission');

let seq = 0;
function newcomer() {
  seq += 1;
  return {
    FirstName: 'Ada',
    LastName: `Push${seq}`,
    Status: 'Active',
    PrimaryEmailAddress: `ada.push${seq}@example.org`,
    LogonId: `apush${seq}`,
    EmployeeNumber: `P-${seq}`,
    UniqueNumber: `UP-${seq}`,
    JobTitle: 'EMT',
  };
}

describe('faults on writes', () => {
  let sb: RunningSandbox;
  let certIds: number[];
  beforeAll(async () => {
    sb = await startSandbox({ size: 'tiny', seed: 4, rateLimit: null });
    certIds = (sb.data.truth('pendingCertifications') as { IndividualCertificationId: number }[]).map(
      (c) => c.IndividualCertificationId,
    );
  });
  afterAll(() => sb.close());
  beforeEach(() => sb.setFaults({}));

  const inserted = async (employeeNumber: string) =>
    (await truth(sb, 'individualInsert')).filter(
      (w: { EmployeeNumber: string }) => w.EmployeeNumber === employeeNumber,
    );

  it('lost: the insert is applied, then the connection drops with no answer', async () => {
    const body = newcomer();
    sb.setFaults({ lost: 1 });
    await expect(call(sb, INSERT, { body })).rejects.toThrow();
    sb.setFaults({});
    const applied = await inserted(body.EmployeeNumber);
    expect(applied).toHaveLength(1);
    expect(applied[0]).toMatchObject({ LastName: body.LastName, AppliedAt: sb.data.now().toISOString() });
    expect(
      (await call(sb, v2('/Individual/GetByEmployeeNumber', { employeeNumber: body.EmployeeNumber }))).status,
    ).toBe(200);
    expect(sb.stats().faults.lost).toBeGreaterThanOrEqual(1);
  });

  it('reset: the connection drops before the insert is processed, so nothing is applied', async () => {
    const body = newcomer();
    sb.setFaults({ reset: 1 });
    await expect(call(sb, INSERT, { body })).rejects.toThrow();
    sb.setFaults({});
    expect(await inserted(body.EmployeeNumber)).toHaveLength(0);
    expect(
      (await call(sb, v2('/Individual/GetByEmployeeNumber', { employeeNumber: body.EmployeeNumber }))).status,
    ).toBe(404);
    // Sent again, it is applied once.
    expect((await call(sb, INSERT, { body })).status).toBe(201);
    expect(await inserted(body.EmployeeNumber)).toHaveLength(1);
  });

  it('500: answered before processing, so the insert is not applied', async () => {
    const body = newcomer();
    sb.setFaults({ error500: 1 });
    const res = await call(sb, INSERT, { body });
    expect(res.status).toBe(500);
    expect(res.json()).toMatchObject({ error: 'internal_server_error' });
    sb.setFaults({});
    expect(await inserted(body.EmployeeNumber)).toHaveLength(0);
  });

  it('slow: the write is applied at once and answered late', async () => {
    const body = newcomer();
    sb.setFaults({ slow: 1, slowMs: 400 });
    const started = Date.now();
    const pending = call(sb, INSERT, { body });
    await new Promise((r) => setTimeout(r, 150));
    expect(await inserted(body.EmployeeNumber)).toHaveLength(1);
    expect((await pending).status).toBe(201);
    expect(Date.now() - started).toBeGreaterThanOrEqual(390);
  });

  it('applies updates under the same faults: lost applies, reset and 500 do not', async () => {
    const ind = (await truth(sb, 'individuals')).find((i: { Status: string }) => i.Status === 'Active');
    const updates = async () =>
      (await truth(sb, 'individualUpdate')).filter((w: { ServiceId: number }) => w.ServiceId === ind.ServiceId).length;
    const post = (MiddleName: string) => call(sb, v2('/Individual/Update'), { body: { ...ind, MiddleName } });
    sb.setFaults({ error500: 1 });
    expect((await post('Five')).status).toBe(500);
    sb.setFaults({ reset: 1 });
    await expect(post('Reset')).rejects.toThrow();
    expect(await updates()).toBe(0);
    sb.setFaults({ lost: 1 });
    await expect(post('Lost')).rejects.toThrow();
    sb.setFaults({});
    expect(await updates()).toBe(1);
    expect((await truth(sb, 'individualByServiceId', { serviceId: ind.ServiceId }))[0].MiddleName).toBe('Lost');
  });

  it('ValidateSubmission applies each RequestId once: a resend after a lost answer is answered 201 and skipped', async () => {
    const item = (requestId: string, id: number) => ({
      RequestId: requestId,
      IndividualCertificationId: String(id),
      IsVerified: false,
      ErrorList: ['Card expired'],
    });
    const batch = [item('req-a', certIds[0]!), item('req-b', certIds[1]!)];
    const before = sb.stats().writes;
    sb.setFaults({ lost: 1 });
    await expect(call(sb, VALIDATE, { body: batch })).rejects.toThrow();
    sb.setFaults({});
    expect((await call(sb, VALIDATE, { body: batch })).status).toBe(201);
    // One new result in a batch with a resent one: only the new one is applied.
    expect((await call(sb, VALIDATE, { body: [batch[0], item('req-c', certIds[2]!)] })).status).toBe(201);
    const applied = (await truth(sb, 'validateSubmission')).map((r: { RequestId: string }) => r.RequestId);
    expect(applied.filter((r: string) => r.startsWith('req-')).sort()).toEqual(['req-a', 'req-b', 'req-c']);
    const after = (await call(sb, '/_sandbox/stats', { key: null })).json().writes;
    expect(after.applied.validateSubmission - before.applied.validateSubmission).toBe(3);
    expect(after.duplicateRequestIds - before.duplicateRequestIds).toBe(3);
  });

  it('304: the insert is applied, then answered with a bare 304; reads never meet it', async () => {
    const body = newcomer();
    const before = sb.stats().faults.notModified;
    sb.setFaults({ notModified: 1 });
    expect((await call(sb, v2('/Individual/GetByEmployeeNumber', { employeeNumber: 'nobody' }))).status).toBe(404);
    const res = await call(sb, INSERT, { body });
    sb.setFaults({});
    expect(res.status).toBe(304);
    expect(res.text).toBe('');
    expect(await inserted(body.EmployeeNumber)).toHaveLength(1);
    expect(sb.stats().faults.notModified - before).toBe(1);
  });

  it('only=writes: writes meet the faults and reads do not', async () => {
    sb.setFaults({ error500: 1, only: 'writes' });
    expect((await call(sb, v2('/Schedule/GetList'))).status).toBe(200);
    const body = newcomer();
    expect((await call(sb, INSERT, { body })).status).toBe(500);
    sb.setFaults({ error500: 1, only: 'reads' });
    expect((await call(sb, v2('/Schedule/GetList'))).status).toBe(500);
    expect((await call(sb, INSERT, { body })).status).toBe(201);
    expect(await inserted(body.EmployeeNumber)).toHaveLength(1);
  });

  it('counts each fault it applied in the stats', async () => {
    const before = sb.stats().faults;
    sb.setFaults({ error500: 1 });
    await call(sb, v2('/Schedule/GetList'));
    sb.setFaults({ reset: 1 });
    await expect(call(sb, v2('/Schedule/GetList'))).rejects.toThrow();
    sb.setFaults({});
    const after = sb.stats().faults;
    expect(after.error500 - before.error500).toBe(1);
    expect(after.reset - before.reset).toBe(1);
  });
});
