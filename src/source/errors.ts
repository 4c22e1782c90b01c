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

  get retryable(): boolean {
    return RETRYABLE.has(this.kind);
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
