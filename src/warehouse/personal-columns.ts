import { getTableConfig, type PgTable } from 'drizzle-orm/pg-core';
import { DEFAULT_SCHEMA, warehouseTables } from './schema.ts';

/**
 * Which columns of each warehouse table carry a person's data, read from the columns' names: a person's names
 * wherever they are copied (assignee, crew member, supervisor, submitter, reviewer, ...), e-mail, phones, home
 * and incident addresses, birth date, gender, logon, employee and unique numbers, licence numbers, free-text
 * answers, and the raw payloads (`_extra`, a reject's `raw`, a pushed change's `payload`) that may hold any of
 * them. The field catalog of the personal-data policies is to replace this list: `personalColumnsOf` is the
 * one place that reads it.
 */
const PERSONAL_NAME = [
  /(^|_)(legal_)?(first|middle|last)_name$/,
  /^supervisor_name$/,
  /(^|_)employee_number$/,
  /(^|_)unique_(number|identifier)$/,
  /^logon_id$/,
  /^date_of_birth/,
  /^gender$/,
  /email_address$/,
  /^home_/,
  /phone_number$/,
  /^certification_number$/,
  /^update_by$/,
  /^(answer_value|answer_text|other_text)$/,
  /incident_address_/,
  /patient_(age|care_report_number)$/,
  /^(_extra|raw|payload)$/,
];

/** Secrets no granted role reads, with or without personal columns: a sealed API key, a sealed SSN. */
const SECRET: Record<string, readonly string[]> = { companies: ['api_key_sealed'], push_outbox: ['sealed'] };

/** Postgres keeps the first 63 bytes of a longer name: the column in the database has the shortened one. */
const asStored = (name: string) => Buffer.from(name).subarray(0, 63).toString('utf8');

const personalByTable: ReadonlyMap<string, readonly string[]> = new Map(
  Object.values(warehouseTables(DEFAULT_SCHEMA)).map((t) => {
    const { name, columns } = getTableConfig(t as PgTable);
    return [
      name,
      columns
        .map((c) => c.name)
        .filter((c) => PERSONAL_NAME.some((p) => p.test(c)))
        .map(asStored),
    ] as const;
  }),
);

/** The personal columns of a warehouse table (none for a table the warehouse does not declare). */
export function personalColumnsOf(table: string): readonly string[] {
  return personalByTable.get(table) ?? [];
}

/** Columns of a table that stay unreadable to every granted role. */
export function secretColumnsOf(table: string): readonly string[] {
  return SECRET[table] ?? [];
}
