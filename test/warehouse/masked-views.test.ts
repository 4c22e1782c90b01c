import { getTableConfig, type PgTable } from 'drizzle-orm/pg-core';
import { describe, expect, it } from 'vitest';
import { personalCatalog } from '../../src/resources/index.ts';
import { maskedColumns } from '../../src/warehouse/masked-views.ts';
import { DEFAULT_SCHEMA, warehouseTables } from '../../src/warehouse/schema.ts';

/**
 * The catalog is the one list of what is personal; these are the names a person's data goes by in columns. A
 * column named so that the catalog misses is a field copied somewhere the catalog was not told about.
 */
const NAMED_LIKE_A_PERSON = [
  /(^|_)(legal_)?(first|middle|last)_name$/,
  /^supervisor_name$/,
  /(^|_)employee_number$/,
  /(^|_)unique_(number|identifier)$/,
  /^logon_id$/,
  /^date_of_birth$/,
  /^gender$/,
  /email_address$/,
  /^home_/,
  /phone_number$/,
  /^certification_number$/,
  /^update_by$/,
  /^answer_value$/,
];

describe('the masked columns', () => {
  const masked = maskedColumns(personalCatalog);

  it('include every column named like a person’s data, in every table', () => {
    const missed = Object.values(warehouseTables(DEFAULT_SCHEMA)).flatMap((t) => {
      const { name, columns } = getTableConfig(t as PgTable);
      return columns
        .map((c) => Buffer.from(c.name).subarray(0, 63).toString('utf8'))
        .filter((c) => NAMED_LIKE_A_PERSON.some((p) => p.test(c)) && !masked.get(name)?.has(c))
        .map((c) => `${name}.${c}`);
    });
    expect(missed).toEqual([]);
  });

  it('include the raw payloads of rejects and pushed changes, and no numeric column: joins and counts use ids', () => {
    expect(masked.get('sync_rejects')).toContain('raw');
    expect(masked.get('push_outbox')).toContain('payload');
    const numeric = Object.values(warehouseTables(DEFAULT_SCHEMA)).flatMap((t) => {
      const { name, columns } = getTableConfig(t as PgTable);
      return columns
        .filter((c) => ['integer', 'bigint'].includes(c.getSQLType()) && masked.get(name)?.has(c.name))
        .map((c) => `${name}.${c.name}`);
    });
    expect(numeric).toEqual([]);
  });
});
