import type { Warehouse } from '../connection.ts';
import { DEFAULT_POLICY_KEY, type FieldClass, type NewFieldMode } from '../tables/personal-data.ts';

/**
 * The statements of `field_classes` (what each field the service added is, per company or as the default) and
 * `new_field_modes` (whether the values of fields not classified yet are stored). A company's own row wins over
 * the default's. Read once per policy version by the row path (policy.ts), written by new-fields.ts.
 */

/** What a company's pages are written under, of the fields the service added. */
export interface NewFields {
  /** Each classified field, by path: the company's own class, else the default's. */
  readonly classes: ReadonlyMap<string, FieldClass>;
  /** Whether the values of unclassified fields are held: the company's mode, else the default's, else keep. */
  readonly hold: boolean;
}

export interface FieldClassRow {
  company: string;
  field: string;
  class: FieldClass;
  classifiedAt: Date;
}

const t = (wh: Warehouse, table: string) => wh.sql`${wh.sql(wh.schema)}.${wh.sql(table)}`;

export async function newFieldsOf(wh: Warehouse, companyKey: string): Promise<NewFields> {
  const [classes, modes] = await Promise.all([
    wh.sql<{ field: string; class: FieldClass }[]>`
      select field, class from ${t(wh, 'field_classes')} where company_key in (${companyKey}, ${DEFAULT_POLICY_KEY})
      order by company_key = ${DEFAULT_POLICY_KEY} desc`,
    wh.sql<{ company_key: string; mode: NewFieldMode }[]>`
      select company_key, mode from ${t(wh, 'new_field_modes')} where company_key in (${companyKey}, ${DEFAULT_POLICY_KEY})`,
  ]);
  const mode =
    modes.find((m) => m.company_key === companyKey) ?? modes.find((m) => m.company_key === DEFAULT_POLICY_KEY);
  return { classes: new Map(classes.map((c) => [c.field, c.class])), hold: mode?.mode === 'hold' };
}

/** The classes stored for a company (with the default's) or for every company, by company and field. */
export async function listFieldClasses(wh: Warehouse, companyKey?: string): Promise<FieldClassRow[]> {
  return wh.sql<FieldClassRow[]>`
    select company_key as company, field, class, classified_at as "classifiedAt" from ${t(wh, 'field_classes')}
    ${companyKey === undefined ? wh.sql`` : wh.sql`where company_key in (${companyKey}, ${DEFAULT_POLICY_KEY})`}
    order by company_key, field`;
}

/** Each company's own mode, and the default's under `*`. */
export async function listNewFieldModes(wh: Warehouse): Promise<Map<string, NewFieldMode>> {
  const rows = await wh.sql<{ company_key: string; mode: NewFieldMode }[]>`
    select company_key, mode from ${t(wh, 'new_field_modes')}`;
  return new Map(rows.map((r) => [r.company_key, r.mode]));
}

/** Stores a class in the caller's transaction (which holds the policy lock). */
export async function storeFieldClass(
  tx: Warehouse['sql'],
  schema: string,
  row: { company: string; field: string; class: FieldClass },
): Promise<void> {
  await tx`insert into ${tx(schema)}.field_classes (company_key, field, class) values (${row.company}, ${row.field}, ${row.class})
    on conflict (company_key, field) do update set class = excluded.class, classified_at = now()`;
}

/** Stores a mode in the caller's transaction (which holds the policy lock). */
export async function storeNewFieldMode(
  tx: Warehouse['sql'],
  schema: string,
  companyKey: string,
  mode: NewFieldMode,
): Promise<void> {
  await tx`insert into ${tx(schema)}.new_field_modes (company_key, mode) values (${companyKey}, ${mode})
    on conflict (company_key) do update set mode = excluded.mode, changed_at = now()`;
}

/** The streams that sent a field to a company (or to any company, for `*`), as schema_changes recorded them. */
export async function streamsThatSent(
  wh: Warehouse,
  companyKey: string,
  field: string,
): Promise<{ company: string; stream: string }[]> {
  return wh.sql<{ company: string; stream: string }[]>`
    select distinct company_key as company, stream from ${t(wh, 'schema_changes')}
    where field_path = ${field} ${companyKey === DEFAULT_POLICY_KEY ? wh.sql`` : wh.sql`and company_key = ${companyKey}`}
    order by 1, 2`;
}

/** The fields a company's streams sent that no column maps, with the streams that sent each. */
export async function fieldsSentTo(wh: Warehouse, companyKey: string): Promise<{ field: string; stream: string }[]> {
  return wh.sql<{ field: string; stream: string }[]>`
    select field_path as field, stream from ${t(wh, 'schema_changes')} where company_key = ${companyKey} order by 1, 2`;
}
