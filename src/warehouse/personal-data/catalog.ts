/**
 * Where the service's personal fields land in the warehouse: one entry per column, worked out from the record
 * schemas and the stream targets by resources/personal-data.ts. The warehouse reads it to apply policies to
 * rows, rewrite what is stored, and erase one person.
 */

/**
 * Whose data a field is: an employee's (`personal`), or a patient's or health data (`patient`), which no
 * employee's erasure reaches. A field the service adds takes a kind when an operator classifies it.
 */
export const PERSONAL_KINDS = ['personal', 'patient'] as const;
export type PersonalKind = (typeof PERSONAL_KINDS)[number];

/** Columns naming whose data a row's personal columns hold. */
export interface PersonColumns {
  readonly serviceId?: string;
  readonly employeeNumber?: string;
}

export interface PersonalColumn {
  readonly table: string;
  readonly column: string;
  /** The service's field it carries (PERSONAL_FIELDS). */
  readonly field: string;
  readonly kind: PersonalKind;
  readonly sqlType: string;
  /** Columns the mapper derives from this one's text (a date's instant and offset): they go with it. */
  readonly companions: readonly string[];
  /** Whose it is, by columns of the same row. */
  readonly person: PersonColumns;
  /** Whose it is, by columns of the parent row (a form's answers are the submitter's). */
  readonly parent?: {
    readonly table: string;
    readonly on: readonly (readonly [string, string])[];
    readonly person: PersonColumns;
  };
}

export type PersonalCatalog = readonly PersonalColumn[];

/** Every column that holds personal data, companions included, by table. */
export function columnsByTable(catalog: PersonalCatalog): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const c of catalog) {
    const cols = (out[c.table] ??= []);
    for (const name of [c.column, ...c.companions]) if (!cols.includes(name)) cols.push(name);
  }
  return out;
}
