import type { PersonalCatalog, PersonalKind } from './personal-data/catalog.ts';

/**
 * Where a resource's items land: data, not code, declared with each stream in src/resources/. The generic mapper
 * (mapper.ts) flattens an item into the target table's columns; nested lists named under `children` go to child
 * tables keyed by their parent.
 */

/** A field path (`Employee.ServiceId`), or alternatives of which the first non-null one counts. */
export type KeyField = string | readonly string[];

export interface ChildTarget {
  /** Dotted path of the nested list in the item (`RelatedRun.Crew`). */
  readonly path: string;
  /** A list inside each element whose elements become the rows (one row per element × inner element). */
  readonly each?: string;
  readonly table: string;
  /** Columns holding the parent's key, in the order of the parent's `key`; default: the same names. */
  readonly parentColumns?: readonly string[];
  /** The child's own key columns after company_key and the parent columns (`_ord` = position in the list). */
  readonly key: readonly string[];
  /** Fields hashed into the child's `_key` column when `key` names `_key`. */
  readonly keyFields?: readonly KeyField[];
}

export interface Target {
  readonly resource: string;
  readonly table: string;
  /** Key columns after company_key. */
  readonly key: readonly string[];
  /** Fields hashed into `_key` when the service gives the record no id. */
  readonly keyFields?: readonly KeyField[];
  readonly children?: readonly ChildTarget[];
  /** `*_history` table keeping every version of a row (valid_from / valid_to). */
  readonly history?: string;
  /** A boolean field that marks the item deleted at the source. */
  readonly deletedFlag?: string;
  /** Envelope fields copied into every item of the page (the form id of a form response list). */
  readonly envelopeFields?: readonly string[];
  /** Another target filled from the envelope in the same transaction (forms from FormId/FormTitle). */
  readonly envelopeTarget?: { readonly target: Target; readonly fields: readonly string[] };
  /** Query parameters of a stream partition → the column that holds them. */
  readonly partitionColumns?: Readonly<Record<string, string>>;
  /** The personal columns of its table, child tables and history (filled from the record schema by defineStream). */
  readonly personal?: PersonalCatalog;
  /** A record field's name → the personal field it carries, wherever it is met (in `_extra` and raw payloads too). */
  readonly personalNames?: Readonly<Record<string, string>>;
  /** Each personal field's kind: a patient's field is out of an employee's erasure. */
  readonly personalKinds?: Readonly<Record<string, PersonalKind>>;
  /** Explicit per-resource override of the item before the generic mapping; none is needed today. */
  readonly prepare?: (item: Record<string, unknown>) => Record<string, unknown>;
}
