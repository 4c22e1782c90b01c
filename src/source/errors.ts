/**
 * Errors are values with a kind, so a caller decides retry or stop without parsing strings.
 */
export type SourceErrorKind =
  | 'auth'
  | 'scope'
  | 'rate_limit'
  | 'bad_request'
  | 'not_found'
  | 'server'
  | 'network'
  | 'timeout'
  | 'schema'
  | 'not_acceptable';

const RETRYABLE: ReadonlySet<SourceErrorKind> = new Set(['rate_limit', 'server', 'network', 'timeout']);

export interface SourceErrorDetails {
  status?: number;
  /** The service's error code (`invalid_parameters`, `unauthorized`, ...). */
  code?: string;
  endpoint?: string;
  /** Seconds until the service's rate-limit period resets, when it said. */
  retryAfterSeconds?: number;
  /** Field-level messages from a validation body (`Errors`). */
  fields?: Record<string, string>;
  cause?: unknown;
}

export class SourceError extends Error {
  override readonly name = 'SourceError';
  readonly kind: SourceErrorKind;
  readonly status?: number;
  readonly code?: string;
  readonly endpoint?: string;
  readonly retryAfterSeconds?: number;
  readonly fields?: Record<string, string>;

  constructor(kind: SourceErrorKind, message: string, details: SourceErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.kind = kind;
    this.status = details.status;
    this.code = details.code;
    this.endpoint = details.endpoint;
    this.retryAfterSeconds = details.retryAfterSeconds;
    this.fields = details.fields;
  }

  /** An HTML page is something other than the service answering (a proxy, a login page): asking again changes nothing. */
  get retryable(): boolean {
    return RETRYABLE.has(this.kind) && this.code !== 'html_page';
  }

  toJSON() {
    return {
      kind: this.kind,
      message: this.message,
      status: this.status,
      code: this.code,
      endpoint: this.endpoint,
      fields: this.fields,
    };
  }
}

export function isSourceError(e: unknown, kind?: SourceErrorKind): e is SourceError {
  return e instanceof SourceError && (kind === undefined || e.kind === kind);
}

/** The kind an HTTP status stands for (service-spec.md, "Errors"). */
export function kindOfStatus(status: number, code?: string): SourceErrorKind {
  if (status === 401) return 'auth';
  if (status === 403) return code === 'rate_limit_exceeded' ? 'rate_limit' : 'scope';
  if (status === 404) return 'not_found';
  if (status === 406) return 'not_acceptable';
  if (status === 429) return 'rate_limit';
  if (status >= 500) return 'server';
  return 'bad_request';
}

/** What an error body said, from either of the service's two shapes. */
export interface ErrorBody {
  code?: string;
  message?: string;
  fields?: Record<string, string>;
}

/**
 * Reads `{ error, error_message }` and `{ Message, Errors: { ... } }` bodies.
 * Anything else (XML, HTML from a proxy, nothing) yields an empty result: the status still decides the kind.
 */
export function readErrorBody(text: string): ErrorBody {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return {};
  }
  if (!body || typeof body !== 'object' || Array.isArray(body)) return {};
  const b = body as Record<string, unknown>;
  const out: ErrorBody = {};
  if (typeof b.error === 'string') out.code = b.error;
  const message = b.error_message ?? b.Message ?? b.message;
  if (typeof message === 'string') out.message = message;
  const fields = readFields(b.Errors);
  if (fields) out.fields = fields;
  return out;
}

function readFields(errors: unknown): Record<string, string> | undefined {
  if (!errors || typeof errors !== 'object' || Array.isArray(errors)) return undefined;
  const fields: Record<string, string> = {};
  for (const [name, value] of Object.entries(errors)) {
    if (typeof value === 'string') fields[name] = value;
    else if (Array.isArray(value)) fields[name] = value.map(String).join('; ');
    else if (value !== null && value !== undefined) fields[name] = JSON.stringify(value);
  }
  return Object.keys(fields).length > 0 ? fields : undefined;
}

/** The service's 304 on writes means "error occurred", not a cache hit (service-spec.md, "Errors"). */
const CODE_OF_STATUS: Readonly<Record<number, string>> = {
  304: 'not_modified',
  400: 'bad_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  406: 'not_acceptable',
  429: 'too_many_requests',
};

const HTML_START = /^\s*(<!doctype html|<html[\s>]|<head[\s>]|<body[\s>])/i;
const HTML_TITLE = /<title[^>]*>([^<]{0,200})<\/title>/i;

/** The title of an HTML page (or '' without one), or undefined when the text is not HTML. */
export function htmlPageTitle(text: string): string | undefined {
  if (!HTML_START.test(text)) return undefined;
  return (HTML_TITLE.exec(text)?.[1] ?? '').replace(/\s+/g, ' ').trim();
}

/** What an HTML answer is, for a message: the service answers JSON, so a page comes from something in the way. */
export function describeHtmlPage(title: string): string {
  return `an HTML page${title ? ` ("${title}")` : ''} instead of the service's JSON: a proxy, gateway or login page answered, or WFS_BASE_URL is not the API's address`;
}

/** A SourceError for a non-success response. */
export function errorFromResponse(
  endpoint: string,
  status: number,
  bodyText: string,
  retryAfterSeconds?: number,
): SourceError {
  const title = htmlPageTitle(bodyText);
  if (title !== undefined) {
    const kind = kindOfStatus(status);
    return new SourceError(kind, `${endpoint}: HTTP ${status} with ${describeHtmlPage(title)}`, {
      status,
      code: 'html_page',
      endpoint,
      retryAfterSeconds: kind === 'rate_limit' ? retryAfterSeconds : undefined,
    });
  }
  const body = readErrorBody(bodyText);
  const code = body.code ?? CODE_OF_STATUS[status] ?? (status >= 500 ? 'internal_server_error' : undefined);
  const kind = kindOfStatus(status, code);
  const fieldText = body.fields
    ? ` (${Object.entries(body.fields)
        .map(([k, v]) => `${k}: ${v}`)
        .join('; ')})`
    : '';
  const said = body.message ?? code ?? 'no message';
  return new SourceError(kind, `${endpoint}: HTTP ${status} ${said}${fieldText}`, {
    status,
    code,
    endpoint,
    fields: body.fields,
    retryAfterSeconds: kind === 'rate_limit' ? retryAfterSeconds : undefined,
  });
}

/** Undici and socket error codes that mean the request or its response did not complete. */
const TIMEOUT_CODES = new Set([
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_CONNECT_TIMEOUT',
  'ETIMEDOUT',
]);

/** The code of a transport error (undici's `code`, or the system error's). */
export function transportCode(e: unknown): string {
  if (e && typeof e === 'object' && 'code' in e && typeof e.code === 'string') return e.code;
  return 'UNKNOWN';
}

/** A SourceError for a request that got no complete response: a timeout, or a network failure. */
export function errorFromTransport(endpoint: string, e: unknown, scrub: (s: string) => string): SourceError {
  const code = transportCode(e);
  const message = scrub(e instanceof Error ? e.message : String(e));
  const kind = TIMEOUT_CODES.has(code) ? 'timeout' : 'network';
  // The cause is rebuilt from scrubbed text so no library object (and nothing it captured) rides along.
  const cause = Object.assign(new Error(message), { code });
  return new SourceError(
    kind,
    `${endpoint}: ${kind === 'timeout' ? 'timed out' : 'network error'} (${code}: ${message})`,
    {
      endpoint,
      code,
      cause,
    },
  );
}
