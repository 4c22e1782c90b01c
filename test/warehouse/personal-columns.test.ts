import { describe, expect, it } from 'vitest';
import { personalColumns } from '../../src/resources/index.ts';
import { personalColumnsOf } from '../../src/warehouse/personal-columns.ts';

/** Postgres keeps the first 63 bytes of a longer name. */
const asStored = (name: string) => Buffer.from(name).subarray(0, 63).toString('utf8');

describe('the columns withheld from a role without --personal', () => {
  it('include every column the personal-data catalog says a personal field lands in', () => {
    const missed = Object.entries(personalColumns()).flatMap(([table, columns]) =>
      columns
        .map(asStored)
        .filter((c) => !personalColumnsOf(table).includes(c))
        .map((c) => `${table}.${c}`),
    );
    expect(missed).toEqual([]);
  });
});
