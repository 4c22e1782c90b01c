import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.ts';
import { endpoints } from '../../src/resources/index.ts';
import { call, truth, v2 } from './http-helpers.ts';

describe('individuals (service-spec.md, "Individuals")', () => {
  let sb: RunningSandbox;
  let people: any[];
  beforeAll(async () => {
    sb = await startSandbox({ size: 'tiny', seed: 3, rateLimit: null });
    people = await truth(sb, 'individuals');
  });
  afterAll(() => sb.close());

  it('GET /Individual/GetList: "200, array of Individual", every item valid, SupervisorName shown as `Supervisor`', async () => {
    const res = await call(sb, v2('/Individual/GetList'));
    expect(res.status).toBe(200);
    const list = res.json();
    expect(list.map((i: any) => i.ServiceId).sort()).toEqual(people.map((i) => i.ServiceId).sort());
    for (const item of list) {
      endpoints.individuals.item.parse(item);
      expect(item).not.toHaveProperty('SupervisorName');
      expect(item).not.toHaveProperty('SSN');
    }
    const supervised = people.find((p) => p.SupervisorName);
    expect(supervised).toBeDefined();
    expect(list.find((i: any) => i.ServiceId === supervised.ServiceId).Supervisor).toBe(supervised.SupervisorName);
  });

  it('ExcludeStatuses: "comma-separated list of `Active`, `LOA`, `Former` to exclude"; another value is refused', async () => {
    const active = (await call(sb, v2('/Individual/GetList', { ExcludeStatuses: 'LOA,Former' }))).json();
    expect(active.length).toBe(people.filter((p) => p.Status === 'Active').length);
    expect(active.every((p: any) => p.Status === 'Active')).toBe(true);
    const bad = await call(sb, v2('/Individual/GetList', { ExcludeStatuses: 'Active,Retired' }));
    expect(bad.status).toBe(400);
    expect(bad.json()).toMatchObject({
      error: 'invalid_parameters',
      error_message: expect.stringContaining('ExcludeStatuses'),
    });
  });

  it('GET /Individual/GetSupervisorList returns "only IndividualId, ServiceId, FirstName, MiddleName, LastName, IsEmployee, IsSupervisor, Status"', async () => {
    const list = (await call(sb, v2('/Individual/GetSupervisorList'))).json();
    expect(list.length).toBeGreaterThan(0);
    for (const item of list) {
      expect(Object.keys(item).sort()).toEqual(
        [
          'FirstName',
          'IndividualId',
          'IsEmployee',
          'IsSupervisor',
          'LastName',
          'MiddleName',
          'ServiceId',
          'Status',
        ].sort(),
      );
    }
  });

  it('fetches "one Individual" by service id, unique identifier and employee number; an unknown key is 404 `not_found`', async () => {
    const p = people.find((x) => x.UniqueNumber && x.EmployeeNumber)!;
    const list = (await call(sb, v2('/Individual/GetList'))).json();
    const listed = list.find((i: any) => i.ServiceId === p.ServiceId);
    for (const [path, query] of [
      ['/Individual/GetByServiceId', { serviceId: p.ServiceId }],
      ['/Individual/GetByUniqueIdentifier', { uniqueIdentifier: p.UniqueNumber }],
      ['/Individual/GetByEmployeeNumber', { employeeNumber: p.EmployeeNumber }],
    ] as const) {
      const res = await call(sb, v2(path, query));
      expect(res.status, path).toBe(200);
      expect(res.json(), path).toEqual(listed);
    }
    const missing = await call(sb, v2('/Individual/GetByServiceId', { serviceId: 987654321 }));
    expect(missing.status).toBe(404);
    expect(missing.json()).toMatchObject({ error: 'not_found' });
    const noParam = await call(sb, v2('/Individual/GetByServiceId'));
    expect(noParam.status).toBe(400);
    expect(noParam.json().error_message).toContain('serviceId');
  });

  it('GET /Individual/Exists answers "JSON boolean: true when an employee with that unique identifier exists"', async () => {
    const p = people.find((x) => x.UniqueNumber)!;
    const yes = await call(sb, v2('/Individual/Exists', { uniqueIdentifier: p.UniqueNumber }));
    expect(yes.status).toBe(200);
    expect(yes.text).toBe('true');
    const no = await call(sb, v2('/Individual/Exists', { uniqueIdentifier: 'nobody-here-0000' }));
    expect(no.text).toBe('false');
  });

  it('POST /Individual/Insert: "201, the created Individual" with its generated IndividualId and ServiceId, then readable', async () => {
    const body = {
      FirstName: 'Grace',
      LastName: 'Hopper',
      Status: 'Active',
      PrimaryEmailAddress: 'grace.hopper@example.test',
      LogonId: 'ghopper1906',
      EmployeeNumber: 'E-GH-1906',
      UniqueNumber: 'U-GH-1906',
      SSN: '123456789',
    };
    const res = await call(sb, v2('/Individual/Insert'), { body });
    expect(res.status).toBe(201);
    const created = res.json();
    expect(created).toMatchObject({ FirstName: 'Grace', LastName: 'Hopper', Status: 'Active' });
    expect(created.IndividualId).toEqual(expect.any(Number));
    expect(created.ServiceId).toEqual(expect.any(Number));
    expect(created).not.toHaveProperty('SSN');
    const fetched = await call(sb, v2('/Individual/GetByServiceId', { serviceId: created.ServiceId }));
    expect(fetched.json()).toEqual(created);
  });

  it('refuses an invalid insert with 400 and the `Message`/`Errors` shape: `Error` plus one entry per field', async () => {
    const res = await call(sb, v2('/Individual/Insert'), {
      body: {
        FirstName: '',
        LastName: 'Nobody',
        Status: 'Active',
        PrimaryEmailAddress: 'not-an-address',
        LogonId: 'nobody1',
      },
    });
    expect(res.status).toBe(400);
    const body = res.json();
    expect(body).toEqual({
      Message: expect.any(String),
      Errors: expect.objectContaining({ Error: expect.any(String) }),
    });
    expect(body.Errors.FirstName).toEqual(expect.any(String));
    expect(body.Errors.PrimaryEmailAddress).toEqual(expect.any(String));
  });

  it('POST /Individual/Update: "200, the updated Individual"; an unknown ServiceId is 404', async () => {
    const p = people.find((x) => x.Status === 'Active' && x.LogonId)!;
    const current = (await call(sb, v2('/Individual/GetByServiceId', { serviceId: p.ServiceId }))).json();
    const res = await call(sb, v2('/Individual/Update'), { body: { ...current, MiddleName: 'Quincy' } });
    expect(res.status).toBe(200);
    expect(res.json()).toMatchObject({ ServiceId: p.ServiceId, MiddleName: 'Quincy' });
    const again = (await call(sb, v2('/Individual/GetByServiceId', { serviceId: p.ServiceId }))).json();
    expect(again.MiddleName).toBe('Quincy');
    const missing = await call(sb, v2('/Individual/Update'), { body: { ...current, ServiceId: 987654321 } });
    expect(missing.status).toBe(404);
    expect(missing.json()).toMatchObject({ error: 'not_found' });
  });
});
