import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { COMPANY_KEY, CompanyError, type CompanyErrorKind } from '../warehouse/company-records.ts';

/** What the companies' routes share: the company key of a path, bodies read, and refusals answered with their status. */

export const STATUS: Record<CompanyErrorKind, ContentfulStatusCode> = {
  unknown_company: 404,
  already_added: 409,
  managed_by_environment: 409,
  invalid: 400,
  key_refused: 422,
  service_unreachable: 422,
  stream_depended_on: 409,
  dependency_off: 409,
  stream_off: 409,
};

export function keyParam(c: Context): { ok: true; key: string } | { ok: false; res: Response } {
  const key = c.req.param('key') ?? '';
  if (!COMPANY_KEY.test(key))
    return { ok: false, res: c.json({ error: 'key: expected letters, digits, - or _ (at most 40)' }, 400) };
  return { ok: true, key };
}

/** A refusal of the table or the service is the caller's to fix: its one line, with the status it stands for. */
export async function acting(c: Context, act: () => Promise<Response>): Promise<Response> {
  try {
    return await act();
  } catch (e) {
    if (e instanceof CompanyError) return c.json({ error: e.message, kind: e.kind }, STATUS[e.kind]);
    throw e;
  }
}

export async function readForm(c: Context): Promise<Record<string, unknown> | undefined> {
  try {
    const form = await c.req.parseBody();
    // A field sent twice is an array: only single values are taken.
    return Object.fromEntries(Object.entries(form).map(([k, v]) => [k, typeof v === 'string' ? v : undefined]));
  } catch {
    return undefined;
  }
}

export async function readJson(c: Context): Promise<{ ok: true; body: unknown } | { ok: false }> {
  try {
    const text = await c.req.text();
    return { ok: true, body: text.trim() === '' ? {} : JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

export const FORM_EXPECTED = 'body: expected a form (application/x-www-form-urlencoded or multipart/form-data)';
