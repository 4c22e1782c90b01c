import type { z } from 'zod';
import type { Lane } from '../ratelimit/types.ts';

/**
 * What an endpoint of the service is (service-spec.md, "Endpoints"): its path, query, answer and item schema. The
 * endpoints themselves are declared with their streams in src/resources/; the sandbox serves from that catalog
 * and the client calls from it.
 */

export type ParamType = 'int' | 'string' | 'bool' | 'date' | 'datetime' | 'enum' | 'csv';

export interface QueryParam {
  readonly name: string;
  readonly type: ParamType;
  readonly required?: boolean;
  readonly default?: string | number | boolean;
  /** Allowed values of an `enum` param, or of each item of a `csv` param. */
  readonly values?: readonly string[];
  readonly min?: number;
  readonly max?: number;
}

export type Scope = 'individuals' | 'certifications';

export type Resend = 'blind' | 'check-first';

/** How a response carries its items. */
export type Response =
  /** Paged envelope; the item count is under `ResultCount` or, for the form lists, `Results`. */
  | { readonly kind: 'envelope'; readonly countField: 'ResultCount' | 'Results'; readonly extras?: readonly string[] }
  /** A plain array, unpaged. */
  | { readonly kind: 'array' }
  /** An array, or a single object: the spec does not say which (reference lists). */
  | { readonly kind: 'array-or-object' }
  /** One item (by-key lookups and writes). */
  | { readonly kind: 'one' }
  /** A JSON boolean. */
  | { readonly kind: 'boolean' }
  /** Nothing to read (201 Created with no body shown). */
  | { readonly kind: 'empty' };

export interface Endpoint<Item extends z.ZodType = z.ZodType, Q extends readonly QueryParam[] = readonly QueryParam[]> {
  readonly name: string;
  readonly method: 'GET' | 'POST';
  readonly path: string;
  readonly query: Q;
  readonly response: Response;
  readonly item: Item;
  readonly body?: z.ZodType;
  /** Success status of a write. */
  readonly status?: 200 | 201;
  readonly scope?: Scope;
  /** Resources with an earlier representation served when `api-version` is absent. */
  readonly earlier?: 'individual' | 'certification';
  /**
   * Whether a request whose answer was lost may be sent again as it is. `blind`: a repeat changes nothing (reads;
   * an Update replaces the sent fields). `check-first`: a repeat may act twice (an Insert), so whoever sends it
   * must look first whether the lost attempt was applied. Default: `blind` for GET, `check-first` for POST.
   */
  readonly resend?: Resend;
  /** The limiter lane a request takes unless the caller names one: writes go in the push lane. */
  readonly lane?: Lane;
  /** A date range the service refuses when longer than `days` (the course list's 31 days). */
  readonly maxRange?: { readonly start: string; readonly end: string; readonly days: number };
}

export const PAGE_LIMIT_MAX = 200;

/** Offset and Limit follow the same rules everywhere. */
export const PAGE_PARAMS = [
  { name: 'Offset', type: 'int', default: 0, min: 0 },
  { name: 'Limit', type: 'int', default: PAGE_LIMIT_MAX, min: 1, max: PAGE_LIMIT_MAX },
] as const satisfies readonly QueryParam[];

/** The filters by employee that the credential lists take. */
export const EMPLOYEE_FILTERS = [
  { name: 'ServiceId', type: 'int' },
  { name: 'UniqueIdentifier', type: 'string' },
  { name: 'EmployeeNumber', type: 'string' },
] as const satisfies readonly QueryParam[];

/** The usual paged answer: the page's item count under `ResultCount`. */
export const ENVELOPE = { kind: 'envelope', countField: 'ResultCount' } as const;

/** Declares an endpoint, keeping its query's literal types for QueryOf. */
export function endpoint<const Item extends z.ZodType, const Q extends readonly QueryParam[]>(
  e: Endpoint<Item, Q>,
): Endpoint<Item, Q> {
  return e;
}

export type ItemOf<E extends Endpoint> = z.output<E['item']>;

/** The spec's API version, sent as `api-version` on every request. */
export const API_VERSION = '2.0';
export const AUTH_HEADER = 'Authorization-Token';

type ValueOf<T extends ParamType> = T extends 'int'
  ? number
  : T extends 'bool'
    ? boolean
    : T extends 'date' | 'datetime'
      ? string | Date
      : T extends 'csv'
        ? string | readonly string[]
        : string;

type PageParamName = (typeof PAGE_PARAMS)[number]['name'];

/** The typed query of an endpoint (page controls excluded: the client drives them). */
export type QueryOf<E extends Endpoint> = {
  [P in E['query'][number] as P extends { required: true } ? P['name'] : never]: ValueOf<P['type']>;
} & {
  [P in E['query'][number] as P extends { required: true } ? never : Exclude<P['name'], PageParamName>]?: ValueOf<
    P['type']
  >;
};

/** How a request to `e` may be repeated after its answer was lost (see Endpoint.resend). */
export function resendOf(e: Endpoint): Resend {
  return e.resend ?? (e.method === 'GET' ? 'blind' : 'check-first');
}

export function isPaged(e: Endpoint): boolean {
  return e.response.kind === 'envelope';
}
