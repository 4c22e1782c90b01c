import { getConnInfo } from '@hono/node-server/conninfo';
import type { Context } from 'hono';
import { countParam } from '../push/http-query.ts';
/**
 * Parameters of the ops server's routes, read strictly: a value that is not what the route expects is refused
 * with a message naming the parameter, before anything reaches Postgres.
 */

export type Param<T> = { ok: true; value: T } | { ok: false; error: string };

/** Ids are Postgres bigints read as JS numbers: digits only, 1 up to the largest exact integer. */
export function idParam(name: string, text: string | undefined): Param<number> {
  const parsed = countParam(Number.MAX_SAFE_INTEGER).safeParse(text ?? '');
  if (!parsed.success) return { ok: false, error: `${name}: ${parsed.error.issues[0]!.message}` };
  return { ok: true, value: parsed.data };
}

/** A company key or stream name as the service's words have them: letters, digits, - and _. */
export function nameParam(name: string, text: string | undefined): Param<string | undefined> {
  if (text === undefined || text === '') return { ok: true, value: undefined };
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(text))
    return { ok: false, error: `${name}: expected letters, digits, - or _ (at most 64)` };
  return { ok: true, value: text };
}

export const FORM_EXPECTED = 'body: expected a form (application/x-www-form-urlencoded or multipart/form-data)';

/** The form's fields, or undefined for a body that is not a well-formed form. */
export async function readForm(c: Context): Promise<Record<string, string | File | (string | File)[]> | undefined> {
  try {
    return await c.req.parseBody();
  } catch {
    return undefined;
  }
}

/** The peer's address (a proxy's, behind one); unknown when the app is called without a socket. */
export function clientOf(c: Context): string {
  try {
    return getConnInfo(c).remote.address ?? 'unknown';
  } catch {
    return 'unknown';
  }
}
