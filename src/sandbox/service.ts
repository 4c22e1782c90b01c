import type { EndpointName } from '../resources/index.ts';

/**
 * The contract between the sandbox's data (generator, store, clock) and its HTTP layer.
 * Records are in the v2.0 shape with canonical field names (the schemas' output names);
 * the HTTP layer applies the wire aliases, versions and formats.
 * Records are immutable: a change replaces the object, so the HTTP layer may cache a record's JSON by identity.
 */

/** Query values after the HTTP layer parsed them by the catalog's param types. */
export type QueryValue = string | number | boolean | Date | readonly string[];
/** Keys are the catalog's param names, exactly as the catalog spells them; page params excluded. */
export type ParsedQuery = Readonly<Record<string, QueryValue | undefined>>;

export interface Page {
  offset: number;
  limit: number;
}

export interface ReadResult {
  items: readonly object[];
  /** For envelopes: more items exist beyond this page. */
  hasMore: boolean;
  /** Extra envelope fields (FormId/FormTitle, RunLogTypeId/RunLogTypeName/RunLogFormType). */
  extras?: Record<string, unknown>;
}

/** A write or read the service refuses, in the spec's terms. */
export interface SandboxRefusal {
  status: 400 | 404 | 304;
  /** `invalid_parameters`, `not_found`, ... */
  code: string;
  message: string;
  /** Field → message, for the `Message`/`Errors` body shape. */
  fields?: Record<string, string>;
}

export type Outcome<T> = { ok: true; value: T } | { ok: false; refusal: SandboxRefusal };

export interface ChangeSummary {
  hours: number;
  now: string;
  counts: Record<string, number>;
}

/** Write endpoints, by the catalog's names. */
export const WRITE_ENDPOINTS = [
  'individualInsert',
  'individualUpdate',
  'certificationInsert',
  'certificationUpdate',
  'validateSubmission',
] as const;
export type WriteEndpoint = (typeof WRITE_ENDPOINTS)[number];

export interface WriteStats {
  /** Writes applied per endpoint; for validateSubmission, verification results (items) applied. */
  applied: Record<WriteEndpoint, number>;
  /** Verification results not applied because their RequestId had been applied before. */
  duplicateRequestIds: number;
}

export interface SandboxData {
  /** The sandbox clock (moves only with `advance`). */
  now(): Date;
  /**
   * Runs a read endpoint: filters as the spec says, then pages (envelopes) or returns all (arrays).
   * `one` endpoints return one item, or a `not_found` refusal; `boolean` endpoints return one boolean item.
   */
  read(endpoint: EndpointName, query: ParsedQuery, page: Page): Outcome<ReadResult>;
  /** Runs a write endpoint with a body the HTTP layer has not validated. */
  write(endpoint: EndpointName, body: unknown): Outcome<object | null>;
  /** Moves the clock and applies a realistic stream of changes with correct stamps. */
  advance(hours: number): ChangeSummary;
  /**
   * Ground truth for tests: every current record of a resource (by endpoint name), canonical names.
   * For a write endpoint: every write it applied, in order, each with `AppliedAt` (the sandbox clock).
   */
  truth(endpoint: EndpointName, query?: ParsedQuery): readonly object[];
  /**
   * The earlier representation of a v2.0 individual or certification record, served when `api-version` is absent
   * (reference ids instead of names, nested contact lists, Status as in the earlier examples).
   */
  earlier(kind: 'individual' | 'certification', record: object): object;
  writeStats(): WriteStats;
  /** The company the data belongs to. */
  companyId(): number;
  /** The form ids and run-log type ids that exist (the spec shows no list endpoint for them). */
  formIds(): number[];
  runTypeIds(): number[];
}
