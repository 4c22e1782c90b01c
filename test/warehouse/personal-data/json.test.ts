import { describe, expect, it } from 'vitest';
import { personalData } from '../../../src/resources/index.ts';
import { personalHmac, personHash } from '../../../src/warehouse/personal-data/hmac.ts';
import { hashLeaves, scrubFields, scrubJson } from '../../../src/warehouse/personal-data/json.ts';
import type { CompanyPolicy } from '../../../src/warehouse/personal-data/policy.ts';

const hmac = personalHmac('json-test-secret');
const catalog = { names: personalData.names, kinds: personalData.kinds };

const policyOf = (o: Partial<CompanyPolicy>): CompanyPolicy => ({
  companyKey: 'a',
  version: '1:0',
  actions: new Map(),
  suppressed: new Set(),
  classes: new Map(),
  hold: false,
  hmac,
  ...o,
});

const run = {
  RunId: 'R-1',
  PatientCareReportNumber: 'PCR-1234567',
  IncidentAddress: { StreetAddress1: '2 Oak St', City: 'Springfield', State: 'IL', ZipCode: '62701' },
  StartedBy: { ServiceId: 77, FirstName: 'Ada' },
};

describe('a JSON value under a policy', () => {
  it('hashes an object field part by part, keeping its shape', () => {
    const policy = policyOf({ actions: new Map([['IncidentAddress', 'hash']]) });
    const out = scrubJson({ RelatedRun: run }, policy, catalog, false) as { RelatedRun: typeof run };
    expect(out.RelatedRun.IncidentAddress).toEqual({
      StreetAddress1: hmac.of('2 Oak St'),
      City: hmac.of('Springfield'),
      State: hmac.of('IL'),
      ZipCode: hmac.of('62701'),
    });
    expect(out.RelatedRun.PatientCareReportNumber).toBe('PCR-1234567');
    expect(hashLeaves({ n: 12, ok: true, none: null }, hmac)).toEqual({
      n: hmac.of('12'),
      ok: hmac.of('true'),
      none: null,
    });
  });

  it("matches an object field's parts by their place: a City elsewhere is not the incident address", () => {
    const policy = policyOf({ actions: new Map([['IncidentAddress', 'block']]) });
    const answer = { AnswerValue: { City: 'Springfield' }, Address: { City: 'Springfield', State: 'IL' } };
    expect(scrubJson({ RelatedRun: run, ...answer }, policy, catalog, false)).toEqual({
      RelatedRun: { RunId: 'R-1', PatientCareReportNumber: 'PCR-1234567', StartedBy: run.StartedBy },
      ...answer,
    });
  });

  it("drops an erased employee's fields but no patient's field beside them", () => {
    const policy = policyOf({ suppressed: new Set([personHash(hmac, 'service_id', 77)]) });
    const erasedRun = { ...run, ServiceId: 77, FirstName: 'Ada' };
    expect(scrubJson(erasedRun, policy, catalog, false)).toEqual({
      RunId: 'R-1',
      ServiceId: 77,
      PatientCareReportNumber: 'PCR-1234567',
      IncidentAddress: run.IncidentAddress,
      StartedBy: { ServiceId: 77 },
    });
  });

  it('finds a classified field by its path, not by its name elsewhere', () => {
    const policy = policyOf({
      classes: new Map([
        ['BadgeNumber', 'personal'],
        ['Answers.Comment', 'patient'],
      ]),
      actions: new Map([
        ['BadgeNumber', 'hash'],
        ['Answers.Comment', 'block'],
      ]),
    });
    const record = { BadgeNumber: 'B-1', Note: { BadgeNumber: 'B-1' }, Answers: { Comment: 'c', Other: 'o' } };
    expect(scrubFields(record, policy, '', false)).toEqual({
      BadgeNumber: hmac.of('B-1'),
      Note: { BadgeNumber: 'B-1' },
      Answers: { Other: 'o' },
    });
    expect(scrubFields({ Comment: 'c', Other: 'o' }, policy, 'Answers.', false)).toEqual({ Other: 'o' });
    // A row naming an erased person loses the fields classified personal, not those classified patient.
    const kept = policyOf({ classes: policy.classes, suppressed: new Set(['x']) });
    expect(scrubFields({ BadgeNumber: 'B-1', Note: 'n' }, kept, '', true)).toEqual({ Note: 'n' });
    expect(scrubFields({ Comment: 'c' }, kept, 'Answers.', true)).toEqual({ Comment: 'c' });
  });
});
