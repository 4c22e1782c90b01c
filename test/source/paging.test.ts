import { describe, expect, it } from 'vitest';
import { endpoints } from '../../src/resources/index.ts';
import { SourceError } from '../../src/source/errors.ts';
import { parseItems, readArray, readArrayOrObject, readContainer, readEnvelope } from '../../src/source/paging.ts';
import { buildQuery, formatDate, formatDateTime } from '../../src/source/query.ts';
import { Locale } from '../../src/source/schemas/index.ts';

describe('containers', () => {
  it('reads an envelope and passes every non-paging field on as extras', () => {
    const body = {
      HasMoreResults: true,
      Offset: 400,
      Results: 2,
      RunLogTypeId: 3,
      RunLogTypeName: 'ALS',
      RunLogFormType: 'Debrief',
      Data: [1, 2],
    };
    expect(readEnvelope(endpoints.runLogFormResponses, body)).toEqual({
      raw: [1, 2],
      hasMore: true,
      extras: { RunLogTypeId: 3, RunLogTypeName: 'ALS', RunLogFormType: 'Debrief' },
    });
  });

  it('refuses an envelope without HasMoreResults, a broken envelope, and what is not a list or an item', () => {
    expect(() => readEnvelope(endpoints.shiftAssignments, { Data: [] })).toThrow(/HasMoreResults/);
    expect(() => readEnvelope(endpoints.shiftAssignments, { HasMoreResults: false, Data: 'x' })).toThrow(SourceError);
    expect(() => readEnvelope(endpoints.shiftAssignments, null)).toThrow(SourceError);
    expect(() => readArray(endpoints.individuals, 'Individuals')).toThrow(SourceError);
    expect(() => readArray(endpoints.individuals, { ResultCount: 0 })).toThrow(SourceError);
  });

  it('reads a bare array for an envelope and a single object for a list, saying which shape it read', () => {
    expect(readEnvelope(endpoints.shiftAssignments, [{ ShiftAssignmentId: 1 }])).toEqual({
      raw: [{ ShiftAssignmentId: 1 }],
      hasMore: false,
      extras: {},
      shape: 'a bare array where an envelope is expected',
    });
    expect(readEnvelope(endpoints.shiftAssignments, { ShiftAssignmentId: 2 })).toMatchObject({
      raw: [{ ShiftAssignmentId: 2 }],
      hasMore: false,
      shape: 'a single object where a list is expected',
    });
    expect(readArray(endpoints.individuals, { ServiceId: 3 })).toMatchObject({
      raw: [{ ServiceId: 3 }],
      shape: 'a single object where a list is expected',
    });
    expect(readArray(endpoints.individuals, { Data: [{ ServiceId: 4 }] })).toMatchObject({
      raw: [{ ServiceId: 4 }],
      shape: 'an envelope where an array is expected',
    });
    expect(readArray(endpoints.individuals, [{ ServiceId: 5 }]).shape).toBeUndefined();
  });

  it('reads each form a reference list may take', () => {
    const e = endpoints.locales;
    expect(readArrayOrObject(e, [{ LocaleId: 1 }]).raw).toEqual([{ LocaleId: 1 }]);
    expect(readArrayOrObject(e, { Data: [{ LocaleId: 2 }] }).raw).toEqual([{ LocaleId: 2 }]);
    expect(readArrayOrObject(e, { Locales: [{ LocaleId: 3 }] }).raw).toEqual([{ LocaleId: 3 }]);
    expect(readArrayOrObject(e, { LocaleId: 4, LocaleName: 'West' }).raw).toEqual([
      { LocaleId: 4, LocaleName: 'West' },
    ]);
    expect(() => readArrayOrObject(e, 'Locales')).toThrow(SourceError);
  });

  it('refuses to read a one-item endpoint as a list', () => {
    expect(() => readContainer(endpoints.individualByServiceId, {})).toThrow(/use lookup/);
  });
});

describe('parseItems', () => {
  it('parses records one by one and rejects the bad ones with their paths', () => {
    const { items, rejects } = parseItems(Locale, [{ LocaleId: 1 }, { LocaleName: 'x' }, null, { LocaleId: 2 }]);
    expect(items.map((i) => i.LocaleId)).toEqual([1, 2]);
    expect(rejects.map((r) => r.raw)).toEqual([{ LocaleName: 'x' }, null]);
    expect(rejects[0]!.reason).toMatch(/^LocaleId: /);
    expect(rejects[1]!.reason).toMatch(/^\(record\): /);
  });
});

describe('query strings', () => {
  it('writes Dates in UTC with the offset spelled out', () => {
    const d = new Date(Date.UTC(2024, 0, 2, 3, 4, 5, 60));
    expect(formatDateTime(d)).toBe('2024-01-02T03:04:05.060+00:00');
    expect(formatDateTime(new Date(Date.UTC(2024, 0, 2)))).toBe('2024-01-02T00:00:00+00:00');
    expect(formatDate(d)).toBe('2024-01-02');
  });

  it('puts api-version first, params in catalog order, page controls last, and encodes + as %2B', () => {
    const q = buildQuery(
      endpoints.runLogFormResponses,
      {
        UpdatedSince: '2024-01-01T00:00:00+01:00',
        FormType: 'Debrief',
        RunTypeId: 4,
        StartDate: '2024-01-01',
        EndDate: '2024-02-01',
      },
      { offset: 200, limit: 200 },
    );
    expect(q).toBe(
      'api-version=2.0&RunTypeId=4&FormType=Debrief&StartDate=2024-01-01&EndDate=2024-02-01&UpdatedSince=2024-01-01T00%3A00%3A00%2B01%3A00&Offset=200&Limit=200',
    );
  });

  it('accepts a csv list as a string or an array', () => {
    expect(buildQuery(endpoints.individuals, { ExcludeStatuses: 'Former, LOA' })).toBe(
      'api-version=2.0&ExcludeStatuses=Former%2CLOA',
    );
    expect(buildQuery(endpoints.individuals, { ExcludeStatuses: ['Former'] })).toBe(
      'api-version=2.0&ExcludeStatuses=Former',
    );
  });
});
