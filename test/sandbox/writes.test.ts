import { describe, expect, it } from 'vitest';
import type { Individual, IndividualCertification } from '../../src/source/schemas/index.ts';
import { createSandboxData } from '../../src/sandbox/data.ts';
import type { SandboxRefusal } from '../../src/sandbox/service.ts';

const fresh = () => createSandboxData({ seed: 5, size: 'tiny' });

const newcomer = {
  FirstName: 'Zoë',
  LastName: 'Nuñez',
  Status: 'Active',
  PrimaryEmailAddress: 'zoe.nunez@example.org',
  LogonId: 'znunez01',
  EmployeeNumber: 'E-9001',
  UniqueNumber: 'UN-9001',
  SSN: '123456789',
  JobTitle: 'Paramedic',
  Department: 'Operations',
  Locale: 'North Station',
};

function refused(r: { ok: boolean; refusal?: SandboxRefusal }): SandboxRefusal {
  if (r.ok || !r.refusal) throw new Error('expected a refusal');
  return r.refusal;
}

function created<T>(r: { ok: boolean; value?: unknown }): T {
  if (!r.ok) throw new Error(`refused: ${JSON.stringify(r)}`);
  return r.value as T;
}

describe('Individual Insert', () => {
  it('creates the individual with generated IndividualId and ServiceId, defaults, and JobTitleId from JobTitle', () => {
    const data = fresh();
    const ind = created<Individual>(
      data.write('individualInsert', {
        ...newcomer,
        IndividualId: 1,
        ServiceId: 2,
        CompanyId: 3,
        JobTitleId: 4,
        LegalFirstName: 'X',
        SupervisorName: 'Y',
      }),
    );
    expect(ind.ServiceId).not.toBe(2);
    expect(ind.IndividualId).not.toBe(1);
    expect(ind.CompanyId).toBe(data.companyId());
    expect(ind.LegalFirstName).toBeNull();
    expect(ind.JobTitleId).toBe(
      (data.truth('jobTitles') as { JobTitleId: number; JobTitleName: string }[]).find(
        (t) => t.JobTitleName === 'Paramedic',
      )?.JobTitleId,
    );
    expect(ind.IsSupervisor).toBe(0);
    expect(ind.ExcludeFromVerificationMonitoring).toBe(false);
    expect(ind).not.toHaveProperty('SSN');
    expect(JSON.stringify(ind)).not.toContain('123456789');
    const back = data.read('individualByServiceId', { serviceId: ind.ServiceId }, { offset: 0, limit: 200 });
    expect(back.ok && back.value.items).toEqual([ind]);
  });

  it('refuses with a message per field: required fields, e-mail, LogonId, SSN, Gender, Status', () => {
    const data = fresh();
    const r = refused(
      data.write('individualInsert', {
        Status: 'Retired',
        PrimaryEmailAddress: 'not-an-email',
        SSN: '123-45-6789',
        Gender: 'X',
      }),
    );
    expect(r.status).toBe(400);
    expect(Object.keys(r.fields ?? {}).sort()).toEqual([
      'FirstName',
      'Gender',
      'LastName',
      'LogonId',
      'PrimaryEmailAddress',
      'SSN',
      'Status',
    ]);
    const long = refused(data.write('individualInsert', { ...newcomer, LogonId: 'a'.repeat(31) }));
    expect(Object.keys(long.fields ?? {})).toEqual(['LogonId']);
    const symbols = refused(data.write('individualInsert', { ...newcomer, LogonId: 'z.nunez' }));
    expect(Object.keys(symbols.fields ?? {})).toEqual(['LogonId']);
  });

  it('keeps EmployeeNumber, LogonId and UniqueNumber unique within the company; an unknown job title is refused', () => {
    const data = fresh();
    created(data.write('individualInsert', newcomer));
    const dup = refused(data.write('individualInsert', { ...newcomer, PrimaryEmailAddress: 'other@example.org' }));
    expect(Object.keys(dup.fields ?? {}).sort()).toEqual(['EmployeeNumber', 'LogonId', 'UniqueNumber']);
    const title = refused(
      data.write('individualInsert', {
        ...newcomer,
        LogonId: 'x1',
        EmployeeNumber: 'x1',
        UniqueNumber: 'x1',
        JobTitle: 'Astronaut',
      }),
    );
    expect(title.fields).toHaveProperty('JobTitle');
  });
});

describe('Individual Update', () => {
  it('an unknown ServiceId is 404', () => {
    expect(refused(fresh().write('individualUpdate', { ...newcomer, ServiceId: 1 }))).toMatchObject({
      status: 404,
      code: 'not_found',
    });
  });

  it('"fetch the individual ..., change the needed fields and post the result": every individual as read posts back unchanged', () => {
    const data = fresh();
    for (const ind of data.truth('individuals') as Individual[]) {
      const r = data.write('individualUpdate', { ...ind, Supervisor: ind.SupervisorName });
      expect(r, String(ind.ServiceId)).toEqual({ ok: true, value: ind });
    }
  });

  it('the body replaces the sent fields; omitted IsSupervisor and ExcludeFromVerificationMonitoring keep their values', () => {
    const data = fresh();
    const sup = (data.truth('individuals') as Individual[]).find(
      (i) => i.IsSupervisor === 1 && i.Status === 'Active',
    ) as Individual;
    const { IsSupervisor: _s, ExcludeFromVerificationMonitoring: _e, MobilePhoneNumber: _m, ...body } = sup;
    const updated = created<Individual>(data.write('individualUpdate', { ...body, LastName: 'Łukasiewicz' }));
    expect(updated.LastName).toBe('Łukasiewicz');
    expect(updated.IsSupervisor).toBe(1);
    expect(updated.ExcludeFromVerificationMonitoring).toBe(sup.ExcludeFromVerificationMonitoring);
    expect(updated.MobilePhoneNumber).toBeNull();
    expect(updated.FirstName).toBe(sup.FirstName);
    // Later reads see the write, in the credentials and in SupervisorName of the people supervised.
    const certs = data.truth('individualCertifications', { ServiceId: sup.ServiceId }) as IndividualCertification[];
    expect(certs.every((c) => c.LastName === 'Łukasiewicz')).toBe(true);
    const supervised = (data.truth('individuals') as Individual[]).filter((i) => i.SupervisorId === sup.IndividualId);
    expect(supervised.every((i) => i.SupervisorName === `Łukasiewicz, ${sup.FirstName}`)).toBe(true);
  });
});

describe('IndividualCertification writes', () => {
  it('Insert needs an existing ServiceId and CertificationId and stamps UpdateDate with the clock date', () => {
    const data = fresh();
    const ind = (data.truth('individuals') as Individual[]).find((i) => i.Status === 'Active') as Individual;
    const bad = refused(data.write('certificationInsert', { ServiceId: 1, CertificationId: 1 }));
    expect(Object.keys(bad.fields ?? {}).sort()).toEqual(['CertificationId', 'ServiceId']);
    const cert = created<IndividualCertification>(
      data.write('certificationInsert', {
        ServiceId: ind.ServiceId,
        CertificationId: 306,
        CertificationNumber: 'BLS-1',
        ExpirationDate: '2028-01-31T00:00:00',
      }),
    );
    expect(cert).toMatchObject({
      ServiceId: ind.ServiceId,
      CertificationName: 'BLS CPR',
      ExpirationDate: '2028-01-31',
      UpdateDate: '2026-01-15',
      IsDeleted: false,
    });
    const listed = data.read(
      'individualCertifications',
      { updatedSince: new Date('2026-01-15T00:00:00Z'), ServiceId: ind.ServiceId },
      { offset: 0, limit: 200 },
    );
    expect(listed.ok && listed.value.items).toContainEqual(cert);
  });

  it('Update identifies by IndividualCertificationId (unknown is 404) and replaces the fields sent', () => {
    const data = fresh();
    const old = (data.truth('individualCertifications') as IndividualCertification[]).find(
      (c) => !c.IsDeleted && c.ExpirationDate,
    ) as IndividualCertification;
    expect(refused(data.write('certificationUpdate', { IndividualCertificationId: 1 }))).toMatchObject({ status: 404 });
    data.advance(48);
    const cert = created<IndividualCertification>(
      data.write('certificationUpdate', {
        IndividualCertificationId: old.IndividualCertificationId,
        ExpirationDate: '2030-06-30',
      }),
    );
    expect(cert.ExpirationDate).toBe('2030-06-30');
    expect(cert.CertificationNumber).toBe(old.CertificationNumber);
    expect(cert.UpdateDate).toBe('2026-01-17');
  });

  it('ValidateSubmission names the item whose IndividualCertificationId does not exist; a verified credential leaves the pending list', () => {
    const data = fresh();
    const pending = data.truth('pendingCertifications') as { IndividualCertificationId: number }[];
    const [a, b] = pending;
    if (!a || !b) throw new Error('the tiny sandbox has at least two pending certifications');
    const item = (id: number, IsVerified: boolean) => ({
      RequestId: `r${id}`,
      IndividualCertificationId: String(id),
      IsVerified,
      ErrorList: IsVerified ? [] : ['Card expired'],
    });
    const bad = refused(
      data.write('validateSubmission', [
        item(a.IndividualCertificationId, true),
        item(b.IndividualCertificationId, true),
        item(42, true),
      ]),
    );
    expect(Object.keys(bad.fields ?? {})).toEqual(['[2].IndividualCertificationId']);
    expect(
      data.write('validateSubmission', [
        item(a.IndividualCertificationId, true),
        item(b.IndividualCertificationId, false),
      ]),
    ).toEqual({ ok: true, value: null });
    const after = data.truth('pendingCertifications') as {
      IndividualCertificationId: number;
      VerificationStatus: string;
      IssuingBodyFailureReason: string[];
    }[];
    expect(after.some((p) => p.IndividualCertificationId === a.IndividualCertificationId)).toBe(false);
    expect(after.find((p) => p.IndividualCertificationId === b.IndividualCertificationId)).toMatchObject({
      VerificationStatus: 'Not Verified',
      IssuingBodyFailureReason: ['Card expired'],
    });
  });
});

describe('earlier representation', () => {
  it('an individual carries reference ids and nested contact lists', () => {
    const data = fresh();
    const ind = (data.truth('individuals') as Individual[]).find(
      (i) => i.Department && i.HomeAddressLine1 && i.MobilePhoneNumber,
    ) as Individual;
    const e = data.earlier('individual', ind) as Record<string, unknown>;
    const dept = (data.truth('departments') as { DepartmentId: number; DepartmentName: string }[]).find(
      (d) => d.DepartmentName === ind.Department,
    );
    expect(e.DepartmentId).toBe(dept?.DepartmentId);
    expect(e).toHaveProperty('LocaleId');
    expect(e).toHaveProperty('WorkShiftId');
    expect(e).toHaveProperty('WorkStatusId');
    expect(e.Addresses).toEqual([
      expect.objectContaining({ AddressType: 'HOME1', AddressLine1: ind.HomeAddressLine1 }),
    ]);
    expect(e.PhoneNumbers).toContainEqual(
      expect.objectContaining({ PhoneType: 'MOBILE1', Number: ind.MobilePhoneNumber }),
    );
    expect(e.EmailAddresses).toEqual([expect.objectContaining({ EmailAddress: ind.PrimaryEmailAddress })]);
    expect(e).not.toHaveProperty('HomeAddressLine1');
  });

  it('a certification has only the listed fields', () => {
    const data = fresh();
    const cert = (data.truth('individualCertifications') as IndividualCertification[])[0] as IndividualCertification;
    expect(Object.keys(data.earlier('certification', cert)).sort()).toEqual(
      [
        'IndividualCertificationId',
        'ServiceId',
        'FirstName',
        'LastName',
        'CertificationId',
        'CertificationName',
        'CertificationNumber',
        'State',
        'Country',
        'ActivationDate',
        'ExpirationDate',
        'UpdateDate',
      ].sort(),
    );
  });
});
