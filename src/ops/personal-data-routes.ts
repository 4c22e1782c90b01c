import type { Context, Hono } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { Logger } from 'pino';
import type { Warehouse } from '../warehouse/connection.ts';
import { COMPANY_KEY } from '../warehouse/companies.ts';
import { erase, setPersonalDataPolicy, type PersonalData, type PersonRef } from '../warehouse/personal-data/admin.ts';
import { listPolicies, PersonalDataError, type PersonalDataErrorKind } from '../warehouse/personal-data/policy.ts';

/**
 * Personal data on the JSON API (behind the push token, with the companies routes): a company's policy
 * (`GET`/`PUT /api/companies/KEY/personal-data`) and the erasure of one person (`POST .../erasures`).
 */

const STATUS: Record<PersonalDataErrorKind, ContentfulStatusCode> = {
  unknown_company: 404,
  unknown_person: 404,
  unknown_field: 400,
  unknown_action: 400,
  not_hashable: 400,
  invalid: 400,
};

export interface PersonalDataRoutesOptions {
  warehouse: Warehouse;
  data: PersonalData;
  log: Logger;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

async function jsonBody(c: Context): Promise<Record<string, unknown> | undefined> {
  try {
    const text = await c.req.text();
    const body: unknown = text.trim() === '' ? {} : JSON.parse(text);
    return isObject(body) ? body : undefined;
  } catch {
    return undefined;
  }
}

async function refusing(c: Context, act: () => Promise<Response>): Promise<Response> {
  try {
    return await act();
  } catch (e) {
    if (e instanceof PersonalDataError) return c.json({ error: e.message, kind: e.kind }, STATUS[e.kind]);
    throw e;
  }
}

/** The person an erasure names: exactly one of serviceId (digits) or employeeNumber; anything else is refused. */
function personOf(body: Record<string, unknown>): { ok: true; ref: PersonRef; requestedBy: string } | { ok: false; error: string } {
  const unknown = Object.keys(body).find((k) => !['serviceId', 'employeeNumber', 'requestedBy'].includes(k));
  if (unknown) return { ok: false, error: `${unknown}: unknown field (serviceId, employeeNumber, requestedBy)` };
  const { serviceId, employeeNumber, requestedBy } = body;
  if (requestedBy !== undefined && (typeof requestedBy !== 'string' || requestedBy.length > 200 || /\p{Cc}/u.test(requestedBy))) {
    return { ok: false, error: 'requestedBy: expected text of at most 200 characters' };
  }
  const by = `api${requestedBy ? `:${requestedBy}` : ''}`;
  if ((serviceId === undefined) === (employeeNumber === undefined)) return { ok: false, error: 'serviceId: give one of serviceId or employeeNumber' };
  if (serviceId !== undefined) {
    if (typeof serviceId !== 'number' || !Number.isSafeInteger(serviceId) || serviceId < 0 || serviceId > 2_147_483_647) {
      return { ok: false, error: 'serviceId: expected a whole number' };
    }
    return { ok: true, ref: { serviceId }, requestedBy: by };
  }
  if (typeof employeeNumber !== 'string' || !employeeNumber.trim() || employeeNumber.length > 100 || /\p{Cc}/u.test(employeeNumber)) {
    return { ok: false, error: 'employeeNumber: expected text of at most 100 characters' };
  }
  return { ok: true, ref: { employeeNumber }, requestedBy: by };
}

function keyOf(c: Context): string | undefined {
  const key = c.req.param('key') ?? '';
  return COMPANY_KEY.test(key) ? key : undefined;
}

const BAD_KEY = 'key: expected letters, digits, - or _ (at most 40)';

/** Adds the routes to the companies API (`api` is mounted at /api/companies, behind its token). */
export function mountPersonalDataApi(api: Hono, o: PersonalDataRoutesOptions): void {
  const wh = o.warehouse;
  api.get('/:key/personal-data', (c) =>
    refusing(c, async () => {
      const key = keyOf(c);
      if (!key) return c.json({ error: BAD_KEY }, 400);
      const [defaults, company] = await listPolicies(wh, key);
      return c.json({ ...company, default: defaults!.fields });
    }),
  );
  api.put('/:key/personal-data', (c) =>
    refusing(c, async () => {
      const key = keyOf(c);
      if (!key) return c.json({ error: BAD_KEY }, 400);
      const body = await jsonBody(c);
      if (!body) return c.json({ error: 'body: expected a JSON object of FIELD: "keep" | "hash" | "block"' }, 400);
      const set = await setPersonalDataPolicy(wh, o.data, key, body);
      o.log.info({ company: key, fields: body }, 'personal-data policy set through the API');
      return c.json({ company: key, fields: body, rewritten: set.rewritten[key] ?? {} });
    }),
  );
  api.post('/:key/erasures', (c) =>
    refusing(c, async () => {
      const key = keyOf(c);
      if (!key) return c.json({ error: BAD_KEY }, 400);
      const body = await jsonBody(c);
      if (!body) return c.json({ error: 'body: expected a JSON object with serviceId or employeeNumber' }, 400);
      const person = personOf(body);
      if (!person.ok) return c.json({ error: person.error }, 400);
      const done = await erase(wh, o.data, key, person.ref, person.requestedBy);
      o.log.info({ company: key, erasure: done.id }, 'individual erased through the API');
      return c.json({ id: done.id, company: key, rewritten: done.counts }, 201);
    }),
  );
}
