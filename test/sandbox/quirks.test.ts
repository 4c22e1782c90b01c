import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.ts';
import { asDateTime } from '../../src/sandbox/http-wire.ts';
import { call, v2 } from './http-helpers.ts';

describe('quirks (off by default)', () => {
  let plain: RunningSandbox;
  let quirky: RunningSandbox;
  beforeAll(async () => {
    plain = await startSandbox({ size: 'tiny', seed: 6, rateLimit: null });
    quirky = await startSandbox({
      size: 'tiny',
      seed: 6,
      rateLimit: null,
      quirks: ['date-times', 'single-object', 'bare-array'],
    });
  });
  afterAll(async () => {
    await plain.close();
    await quirky.close();
  });

  it('date-times: `date` fields come as date-times with fractions and the company offset', async () => {
    const a = (await call(plain, v2('/Individual/GetList'))).json();
    const b = (await call(quirky, v2('/Individual/GetList'))).json();
    const i = a.findIndex((x: { DateOfBirth: string | null; HireDate: string | null }) => x.DateOfBirth && x.HireDate);
    expect(a[i].DateOfBirth).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(b[i].DateOfBirth).toBe(asDateTime(a[i].DateOfBirth));
    expect(b[i].HireDate).toMatch(/^\d{4}-\d{2}-\d{2}T00:00:00\.000-0[56]:00$/);
    expect(asDateTime('1980-01-02')).toBe('1980-01-02T00:00:00.000-06:00');
    expect(asDateTime('2026-07-04')).toBe('2026-07-04T00:00:00.000-05:00');
    const certs = (
      await call(quirky, v2('/IndividualCertification/GetIndividualCertificationList', { Limit: 5 }))
    ).json();
    // With bare-array on too, the envelope is its Data alone.
    for (const c of certs) expect(c.UpdateDate).toMatch(/T00:00:00\.000-0[56]:00$/);
    // Date-times stay as they were.
    const shifts = (
      await call(
        quirky,
        v2('/ShiftAssignment/GetList', { StartDate: '2026-01-10T00:00:00Z', EndDate: '2026-01-11T00:00:00Z' }),
      )
    ).json();
    expect(shifts[0].StartDateTime).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}[+-]\d{2}:\d{2}$/);
  });

  it('single-object: a plain-array list of one item is the item alone; longer lists stay arrays', async () => {
    const courses = (
      await call(
        plain,
        v2('/IndividualCourse/GetList', { startDate: '2025-12-15', endDate: '2026-01-14', statusOption: 0 }),
      )
    ).json();
    const one = courses[0];
    const only = await call(
      quirky,
      v2('/IndividualCourse/GetList', {
        startDate: one.StartDate,
        endDate: one.StartDate,
        statusOption: 0,
        individualId: one.IndividualId,
      }),
    );
    const plainOnly = (
      await call(
        plain,
        v2('/IndividualCourse/GetList', {
          startDate: one.StartDate,
          endDate: one.StartDate,
          statusOption: 0,
          individualId: one.IndividualId,
        }),
      )
    ).json();
    expect(plainOnly).toHaveLength(1);
    expect(Array.isArray(only.json())).toBe(false);
    expect(only.json().IndividualCourseId).toBe(one.IndividualCourseId);
    expect(Array.isArray((await call(quirky, v2('/Locale/GetList'))).json())).toBe(true);
  });

  it('bare-array: an envelope list is its Data array alone', async () => {
    const q = { StartDate: '2026-01-10T00:00:00Z', EndDate: '2026-01-11T00:00:00Z', Limit: 7 };
    const env = (await call(plain, v2('/ShiftAssignment/GetList', q))).json();
    const bare = (await call(quirky, v2('/ShiftAssignment/GetList', q))).json();
    expect(Array.isArray(bare)).toBe(true);
    expect(bare.map((a: { ShiftAssignmentId: number }) => a.ShiftAssignmentId)).toEqual(
      env.Data.map((a: { ShiftAssignmentId: number }) => a.ShiftAssignmentId),
    );
  });

  it('without --quirks the spec shapes are served', async () => {
    const env = (
      await call(
        plain,
        v2('/ShiftAssignment/GetList', { StartDate: '2026-01-10T00:00:00Z', EndDate: '2026-01-11T00:00:00Z' }),
      )
    ).json();
    expect(env).toMatchObject({ HasMoreResults: expect.any(Boolean), Offset: 0, Data: expect.any(Array) });
  });
});
