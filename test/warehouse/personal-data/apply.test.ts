import { describe, expect, it } from 'vitest';
import { fingerprintPage } from '../../../src/warehouse/fingerprint.ts';
import { mapPage } from '../../../src/warehouse/page-map.ts';
import { applyPolicy } from '../../../src/warehouse/personal-data/apply.ts';
import { personalHmac, wrappedContentHash } from '../../../src/warehouse/personal-data/hmac.ts';
import type { CompanyPolicy } from '../../../src/warehouse/personal-data/policy.ts';
import { parsed, targetOf } from '../fixtures.ts';

const hmac = personalHmac('apply-test-secret');
const policy: CompanyPolicy = {
  companyKey: 'a',
  version: '1:0',
  actions: new Map([
    ['PrimaryEmailAddress', 'hash'],
    ['DateOfBirth', 'block'],
  ]),
  suppressed: new Set(),
  classes: new Map(),
  hold: false,
  hmac,
};

function mappedPage() {
  const items = [
    parsed('individuals'),
    parsed('individuals', { IndividualId: 502, ServiceId: 9002, PrimaryEmailAddress: 'eli@example.com' }),
  ];
  const page = mapPage(targetOf('individuals'), items, { companyKey: 'a' });
  fingerprintPage(page);
  return page;
}

describe('a page under a policy', () => {
  it('has every content hash keyed at once, and the rest of the policy on the records written, once however often the write is tried', () => {
    const page = mappedPage();
    const clear = page.mapped.map((m) => m.row._hash as string);
    const { prepare } = applyPolicy(page, [], policy);
    expect(page.mapped.map((m) => m.row._hash)).toEqual(clear.map((h) => wrappedContentHash(hmac, h)));

    const [written, unchanged] = page.mapped;
    // A page's transaction tried again (a key another writer inserted meanwhile) prepares its records again.
    prepare([written!]);
    prepare([written!]);
    expect(written!.row.primary_email_address).toBe(hmac.of('dana@example.com'));
    expect(written!.row.date_of_birth).toBeNull();
    // A record found unchanged is not written: its stored row is under the policy already.
    expect(unchanged!.row.primary_email_address).toBe('eli@example.com');
  });

  it('keys a content hash under the key only, and once', () => {
    const [h] = mappedPage().mapped.map((m) => m.row._hash as string);
    const wrapped = wrappedContentHash(hmac, h!);
    expect(wrapped).toMatch(/^p[0-9a-f]{31}$/);
    expect(wrappedContentHash(hmac, wrapped)).toBe(wrapped);
    expect(wrappedContentHash(personalHmac('another-secret'), h!)).not.toBe(wrapped);
  });
});
