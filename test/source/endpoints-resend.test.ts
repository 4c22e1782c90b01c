import { describe, expect, it } from 'vitest';
import { resendOf } from '../../src/source/endpoints.ts';
import { endpoints } from '../../src/resources/index.ts';

/** Request semantics live in the catalog: how a write may be resent, and its lane. */
describe('endpoint catalog: resend and lane', () => {
  it('an Insert must be checked before it is sent again; an Update and ValidateSubmission may be resent blindly', () => {
    expect(resendOf(endpoints.individualInsert)).toBe('check-first');
    expect(resendOf(endpoints.certificationInsert)).toBe('check-first');
    expect(resendOf(endpoints.individualUpdate)).toBe('blind');
    expect(resendOf(endpoints.certificationUpdate)).toBe('blind');
    expect(resendOf(endpoints.validateSubmission)).toBe('blind');
    expect(resendOf(endpoints.individuals)).toBe('blind');
  });

  it('every write says how it may be resent and goes in the push lane', () => {
    for (const e of Object.values(endpoints).filter((x) => x.method === 'POST')) {
      expect(e.resend, e.name).toBeDefined();
      expect(e.lane, e.name).toBe('push');
    }
  });
});
