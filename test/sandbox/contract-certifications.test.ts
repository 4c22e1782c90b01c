import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.ts';
import { endpoints } from '../../src/resources/index.ts';
import { allPages, call, truth, v2 } from './http-helpers.ts';

const LIST = '/IndividualCertification/GetIndividualCertificationList';
const PENDING = '/IndividualCertification/GetIndividualCertificationPendingList';
const REQUIRED = '/IndividualCertification/GetRequiredCertificationStatus';

describe('individual certifications (service-spec.md, "Individual certifications")', () => {
  let sb: RunningSandbox;
  beforeAll(async () => {
    sb = await startSandbox({ size: 'tiny', seed: 5, rateLimit: null });
  });
  afterAll(() => sb.close());

  it('lists "the latest version of all certifications" in an envelope; deleted ones only with IncludeDeleted=true', async () => {
    const current = await allPages(sb, LIST, {}, 100);
    const expected = await truth(sb, 'individualCertifications', { IncludeDeleted: false });
    expect(current.map((c) => c.IndividualCertificationId).sort()).toEqual(
      expected.map((c) => c.IndividualCertificationId).sort(),
    );
    for (const c of current) {
      endpoints.individualCertifications.item.parse(c);
      expect(c.IsDeleted).not.toBe(true);
    }
    const withDeleted = await allPages(sb, LIST, { IncludeDeleted: true }, 200);
    expect(withDeleted.length).toBe((await truth(sb, 'individualCertifications', { IncludeDeleted: true })).length);
    expect(withDeleted.length).toBeGreaterThanOrEqual(current.length);
  });

  it('restricts to one employee by ServiceId; an invalid ServiceId is "404 not_found"', async () => {
    const sample = (await call(sb, v2(LIST, { Limit: 1 }))).json().Data[0];
    const mine = await allPages(sb, LIST, { ServiceId: sample.ServiceId });
    expect(mine.length).toBeGreaterThan(0);
    expect(mine.every((c) => c.ServiceId === sample.ServiceId)).toBe(true);
    const res = await call(sb, v2(LIST, { ServiceId: 987654321 }));
    expect(res.status).toBe(404);
    expect(res.json()).toMatchObject({ error: 'not_found' });
  });

  it('updatedSince (a date): "only credentials updated on or after that date"', async () => {
    const all = await allPages(sb, LIST, {});
    const dates = all.map((c) => c.UpdateDate as string).sort();
    const since = dates[Math.floor(dates.length / 2)]!.slice(0, 10);
    const recent = await allPages(sb, LIST, { updatedSince: since });
    expect(recent.length).toBeGreaterThan(0);
    expect(recent.length).toBeLessThan(all.length);
    expect(recent.every((c) => c.UpdateDate.slice(0, 10) >= since)).toBe(true);
  });

  it('lists pending certifications and required certification status in envelopes of valid items', async () => {
    const pending = (await call(sb, v2(PENDING))).json();
    expect(pending).toMatchObject({ Offset: 0, ResultCount: pending.Data.length, HasMoreResults: expect.any(Boolean) });
    for (const p of pending.Data) endpoints.pendingCertifications.item.parse(p);
    const status = (await call(sb, v2(REQUIRED, { Limit: 20 }))).json();
    expect(status.ResultCount).toBe(status.Data.length);
    expect(status.Data.length).toBeGreaterThan(0);
    for (const s of status.Data) {
      endpoints.requiredCertificationStatus.item.parse(s);
      for (const r of s.CredentialRequirements) {
        // "RequirementsMet is true exactly when no requirement ... is expired or missing."
        const unmet = r.Requirements.some(
          (q: any) => q.RequirementStatus === 'Expired' || q.RequirementStatus === 'Missing',
        );
        expect(r.RequirementsMet).toBe(!unmet);
      }
    }
  });

  it('POST Insert answers 200 with the created certification; Update answers 200 with the updated one', async () => {
    const person = (await truth(sb, 'individuals')).find((p) => p.Status === 'Active')!;
    const cert = (await call(sb, v2('/Certification/GetCertificationList'))).json()[0];
    const res = await call(sb, v2('/IndividualCertification/Insert'), {
      body: {
        ServiceId: person.ServiceId,
        CertificationId: cert.CertificationId,
        CertificationNumber: 'RN-2041',
        Reference: 'entered by contract test',
        ActivationDate: '2025-01-01T00:00:00+00:00',
        ExpirationDate: '2027-01-01T00:00:00+00:00',
      },
    });
    expect(res.status).toBe(200);
    const created = res.json();
    expect(created).toMatchObject({
      ServiceId: person.ServiceId,
      CertificationId: cert.CertificationId,
      CertificationNumber: 'RN-2041',
    });
    const updated = await call(sb, v2('/IndividualCertification/Update'), {
      body: { IndividualCertificationId: created.IndividualCertificationId, CertificationNumber: 'RN-2042' },
    });
    expect(updated.status).toBe(200);
    expect(updated.json()).toMatchObject({
      IndividualCertificationId: created.IndividualCertificationId,
      CertificationNumber: 'RN-2042',
    });
    const listed = await allPages(sb, LIST, { ServiceId: person.ServiceId });
    expect(
      listed.find((c) => c.IndividualCertificationId === created.IndividualCertificationId)?.CertificationNumber,
    ).toBe('RN-2042');
  });

  it('POST ValidateSubmission: "201 Created" with an empty body; a verified credential leaves the pending list', async () => {
    const pending = (await call(sb, v2(PENDING))).json().Data;
    expect(pending.length).toBeGreaterThan(0);
    const target = pending[0];
    const res = await call(sb, v2('/IndividualCertification/ValidateSubmission'), {
      body: [
        {
          RequestId: 'req-1',
          IndividualCertificationId: String(target.IndividualCertificationId),
          ECardID: 'card-1',
          IsVerified: true,
          ErrorList: [],
          IssueDate: '2025-01-01',
          ExpirationDate: '2027-01-01',
        },
      ],
    });
    expect(res.status).toBe(201);
    expect(res.text).toBe('');
    const after = await allPages(sb, PENDING, {});
    expect(after.some((p) => p.IndividualCertificationId === target.IndividualCertificationId)).toBe(false);
    const empty = await call(sb, v2('/IndividualCertification/ValidateSubmission'), { body: [] });
    expect(empty.status).toBe(400);
  });
});
