/**
 * What Postgres answered when it refused a login or a statement. postgres.js raises it as a PostgresError; drizzle
 * wraps it in an error of its own ("Failed query: …") with it as the cause, and so may our callers.
 */
export interface PostgresRefusal {
  readonly message: string;
  /** The SQLSTATE, e.g. 42501 for a privilege the role lacks. */
  readonly code: string;
}

const SQLSTATE = /^[0-9A-Z]{5}$/;
/** How deep a chain of causes is searched: wrappers are a few deep, and a cycle must not hang the search. */
const MAX_DEPTH = 10;

/** The errors of `e`'s chain of causes, `e` first. */
export function causesOf(e: unknown): Error[] {
  const chain: Error[] = [];
  for (let at = e; at instanceof Error && chain.length < MAX_DEPTH && !chain.includes(at); at = at.cause)
    chain.push(at);
  return chain;
}

/** Whether `e` is Postgres's answer itself (postgres.js's PostgresError: a SQLSTATE and a severity). */
export function isPostgresRefusal(e: Error): e is Error & PostgresRefusal {
  const { code, severity } = e as { code?: unknown; severity?: unknown };
  return typeof code === 'string' && SQLSTATE.test(code) && typeof severity === 'string';
}

/** Postgres's answer in `e` or its causes; none when no Postgres answered (a connection that failed, a bug). */
export function postgresRefusalOf(e: unknown): PostgresRefusal | undefined {
  return causesOf(e).find(isPostgresRefusal);
}

/** Postgres's message and its code, in one line. */
export function describeRefusal(r: PostgresRefusal): string {
  return `${r.message} (SQLSTATE ${r.code})`;
}
