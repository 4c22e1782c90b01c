import { describe, expect, it } from 'vitest';
import { checkCertification, checkIndividual, checkVerification } from '../../src/push/validate.ts';
import { parseBody } from '../../src/push/intake.ts';

const person = {
  FirstName: 'Ada',
  LastName: 'Lovelace',
  Status: 'Active',
  PrimaryEmailAddress: 'ada@example.org',
  LogonId: 'ada01',
  EmployeeNumber: 'E1',
};

const refusedFields = (r: ReturnType<typeof checkIndividual>) => {
  if (r.ok) throw new Error('expected a refusal');
  return r.fields;
};

describe('individual intake rules', () => {
  it('accepts a complete individual and keeps the SSN out of the payload', () => {
    const r = checkIndividual({ ...person, SSN: '123456789', changeId: 'c1' });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.change).toMatchObject({ kind: 'individual', changeId: 'c1', entityKey: 'en:E1', ssn: '123456789' });
    expect(JSON.stringify(r.change.payload)).not.toContain('123456789');
  });

  it.each([
    ['FirstName', { FirstName: undefined }],
    ['LastName', { LastName: undefined }],
    ['Status', { Status: undefined }],
    ['PrimaryEmailAddress', { PrimaryEmailAddress: undefined }],
    ['LogonId', { LogonId: undefined }],
  ])('refuses an insert without %s, naming it', (field, over) => {
    const f = refusedFields(checkIndividual({ ...person, ...over }));
    expect(Object.keys(f)).toEqual([field]);
    expect(f[field]).toMatch(/required/);
  });

  it('accepts no LogonId for a single sign-on company', () => {
    expect(checkIndividual({ ...person, LogonId: undefined }, { singleSignOn: true }).ok).toBe(true);
  });

  it.each([
    ['LogonId', 'a'.repeat(31), /alphanumeric, at most 30/],
    ['LogonId', 'ada.l', /alphanumeric/],
    ['SSN', '123-45-6789', /exactly 9 digits/],
    ['SSN', '12345678', /exactly 9 digits/],
    ['PrimaryEmailAddress', 'not-an-email', /e-mail/],
    ['Status', 'Retired', /Active, LOA, Former/],
    ['Gender', 'X', /M, F or blank/],
    ['DateOfBirth', '1990-02-30', /calendar date/],
    ['HireDate', 'yesterday', /date/],
    ['IsSupervisor', 2, /0 or 1/],
  ])('refuses %s = %j with its reason', (field, value, reason) => {
    const f = refusedFields(checkIndividual({ ...person, [field]: value }));
    expect(Object.keys(f)).toEqual([field]);
    expect(f[field]).toMatch(reason);
  });

  it.each(['IndividualId', 'CompanyId', 'LegalFirstName', 'JobTitleId', 'AdditionalJobTitles', 'SupervisorName'])(
    'refuses the read-only field %s by name',
    (field) => {
      const f = refusedFields(checkIndividual({ ...person, [field]: 1 }));
      expect(f[field]).toMatch(/read only/);
    },
  );

  it('refuses an insert without EmployeeNumber or UniqueNumber, saying why', () => {
    const f = refusedFields(checkIndividual({ ...person, EmployeeNumber: undefined }));
    expect(f.EmployeeNumber).toMatch(/lost/);
    expect(checkIndividual({ ...person, EmployeeNumber: undefined, UniqueNumber: 'U1' }).ok).toBe(true);
  });

  it('an update by ServiceId needs only the fields it changes', () => {
    const r = checkIndividual({ ServiceId: 5, MiddleName: 'Q' });
    expect(r.ok && r.change.entityKey).toBe('sid:5');
  });

  it('refuses unknown fields', () => {
    expect(refusedFields(checkIndividual({ ...person, Nickname: 'x' }))).toEqual({ Nickname: 'unknown field' });
  });
});

describe('credential and verification intake rules', () => {
  it('an insert needs a holder, CertificationId and CertificationNumber', () => {
    const r = checkCertification({ CertificationId: 3 });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(Object.keys(r.fields).sort()).toEqual(['CertificationNumber', 'ServiceId']);
    const ok = checkCertification({
      EmployeeNumber: 'E1',
      CertificationId: 3,
      CertificationNumber: 'N',
      ExpirationDate: '2030-01-01',
    });
    expect(ok.ok && ok.change).toMatchObject({ entityKey: 'en:E1/c:3/N', holderKey: 'en:E1' });
  });

  it('refuses read-only credential fields and bad dates', () => {
    const r = checkCertification({ IndividualCertificationId: 9, IsDeleted: true, ExpirationDate: '31/01/2030' });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.fields.IsDeleted).toMatch(/read only/);
    expect(r.fields.ExpirationDate).toMatch(/date/);
  });

  it('a verification result needs RequestId, IndividualCertificationId and IsVerified', () => {
    const r = checkVerification({ ErrorList: [] });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(Object.keys(r.fields).sort()).toEqual(['IndividualCertificationId', 'IsVerified', 'RequestId']);
  });
});

describe('bodies', () => {
  it('reads one object, an array, or NDJSON', () => {
    expect(parseBody('{"a":1}', false)).toEqual({ items: [{ a: 1 }] });
    expect(parseBody('[{"a":1},{"a":2}]', false)).toEqual({ items: [{ a: 1 }, { a: 2 }] });
    expect(parseBody('{"a":1}\n\n{"a":2}\n', true)).toEqual({ items: [{ a: 1 }, { a: 2 }] });
    expect(parseBody('{"a":1}\nnope', true)).toEqual({ error: 'line 2 is not JSON' });
  });
});
