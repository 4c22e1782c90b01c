import type { Context, Hono } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { Logger } from 'pino';
import type { Warehouse } from '../warehouse/connection.ts';
import { COMPANY_KEY } from '../warehouse/company-records.ts';
import type { Actor } from '../warehouse/audit.ts';
import type { CompanyAdmin } from './company-admin.ts';
import {
  listPersonalData,
  type PersonalData,
  type PersonalDataListing,
  type PersonRef,
} from '../warehouse/personal-data/admin.ts';
import {
  PERSONAL_DATA_ACTIONS,
  PersonalDataError,
  type PersonalDataErrorKind,
} from '../warehouse/personal-data/policy.ts';
import { esc, holds, layout, type Viewer } from './page.ts';

/**
 * Personal data on the JSON API (behind the push token, with the companies routes): a company's policy
 * (`GET`/`PUT /api/companies/KEY/personal-data`) and the erasure of one person (`POST .../erasures`).
 */

export const PERSONAL_DATA_STATUS: Record<PersonalDataErrorKind, ContentfulStatusCode> = {
  unknown_company: 404,
  unknown_person: 404,
  unknown_field: 400,
  unknown_action: 400,
  not_hashable: 400,
  not_classified: 400,
  unknown_class: 400,
  fixed_class: 400,
  unknown_mode: 400,
  invalid: 400,
};

export interface PersonalDataRoutesOptions {
  warehouse: Warehouse;
  data: PersonalData;
  log: Logger;
  /** Where the changes go, audited. */
  admin: CompanyAdmin;
  /** Who a request acts as. */
  actor: (c: Context) => Actor;
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

/** A refusal of the personal-data rules is the caller's to fix: its one line, with the status it stands for. */
export async function refusing(c: Context, act: () => Promise<Response>): Promise<Response> {
  try {
    return await act();
  } catch (e) {
    if (e instanceof PersonalDataError) return c.json({ error: e.message, kind: e.kind }, PERSONAL_DATA_STATUS[e.kind]);
    throw e;
  }
}

/** The person an erasure names: exactly one of serviceId (digits) or employeeNumber; anything else is refused. */
function personOf(
  body: Record<string, unknown>,
): { ok: true; ref: PersonRef; requestedBy?: string } | { ok: false; error: string } {
  const unknown = Object.keys(body).find((k) => !['serviceId', 'employeeNumber', 'requestedBy'].includes(k));
  if (unknown) return { ok: false, error: `${unknown}: unknown field (serviceId, employeeNumber, requestedBy)` };
  const { serviceId, employeeNumber, requestedBy } = body;
  if (
    requestedBy !== undefined &&
    (typeof requestedBy !== 'string' || requestedBy.length > 200 || /\p{Cc}/u.test(requestedBy))
  ) {
    return { ok: false, error: 'requestedBy: expected text of at most 200 characters' };
  }
  if ((serviceId === undefined) === (employeeNumber === undefined))
    return { ok: false, error: 'serviceId: give one of serviceId or employeeNumber' };
  if (serviceId !== undefined) {
    if (
      typeof serviceId !== 'number' ||
      !Number.isSafeInteger(serviceId) ||
      serviceId < 0 ||
      serviceId > 2_147_483_647
    ) {
      return { ok: false, error: 'serviceId: expected a whole number' };
    }
    return { ok: true, ref: { serviceId }, requestedBy: requestedBy || undefined };
  }
  if (
    typeof employeeNumber !== 'string' ||
    !employeeNumber.trim() ||
    employeeNumber.length > 100 ||
    /\p{Cc}/u.test(employeeNumber)
  ) {
    return { ok: false, error: 'employeeNumber: expected text of at most 100 characters' };
  }
  return { ok: true, ref: { employeeNumber }, requestedBy: requestedBy || undefined };
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
      const [defaults, company] = await listPersonalData(wh, o.data, key);
      return c.json({ ...company, default: defaults!.fields });
    }),
  );
  api.put('/:key/personal-data', (c) =>
    refusing(c, async () => {
      const key = keyOf(c);
      if (!key) return c.json({ error: BAD_KEY }, 400);
      const body = await jsonBody(c);
      if (!body) return c.json({ error: 'body: expected a JSON object of FIELD: "keep" | "hash" | "block"' }, 400);
      const set = await o.admin.setPolicy(o.actor(c), key, body);
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
      const done = await o.admin.erase(o.actor(c), key, person.ref, person.requestedBy);
      o.log.info({ company: key, erasure: done.id }, 'individual erased through the API');
      return c.json({ id: done.id, company: key, rewritten: done.counts }, 201);
    }),
  );
}

export interface PersonalDataPageOptions extends PersonalDataRoutesOptions {
  viewer: (c: Context) => Viewer;
}

const FORM_EXPECTED = 'body: expected a form (application/x-www-form-urlencoded or multipart/form-data)';

async function formOf(c: Context): Promise<Record<string, string | undefined> | undefined> {
  try {
    const form = await c.req.parseBody();
    return Object.fromEntries(Object.entries(form).map(([k, v]) => [k, typeof v === 'string' ? v : undefined]));
  } catch {
    return undefined;
  }
}

/**
 * A company's personal-data page (`/companies/KEY/personal-data`): its policy per field for everyone; signed in,
 * a form that sets it and one that erases a person (`/actions/companies/KEY/...`, behind the dashboard's sign-in).
 */
export function mountPersonalDataPages(app: Hono, actions: Hono, o: PersonalDataPageOptions): void {
  const wh = o.warehouse;
  const back = (c: Context, key: string, said: string) =>
    c.redirect(`/companies/${encodeURIComponent(key)}/personal-data?done=${encodeURIComponent(said)}`, 303);
  app.get('/companies/:key/personal-data', (c) =>
    refusing(c, async () => {
      const key = keyOf(c);
      if (!key) return c.json({ error: BAD_KEY }, 400);
      const [defaults, company] = await listPersonalData(wh, o.data, key);
      return c.html(policyPage(key, company!, defaults!, o.viewer(c), c.req.query('done')));
    }),
  );
  actions.post('/companies/:key/personal-data', (c) =>
    refusing(c, async () => {
      const key = keyOf(c);
      if (!key) return c.json({ error: BAD_KEY }, 400);
      const form = await formOf(c);
      if (!form) return c.json({ error: FORM_EXPECTED }, 400);
      const pairs = Object.fromEntries(Object.entries(form).filter(([, v]) => v !== undefined && v !== ''));
      const set = await o.admin.setPolicy(o.actor(c), key, pairs);
      o.log.info({ company: key, fields: pairs }, 'personal-data policy set from the dashboard');
      const rows = Object.values(set.rewritten[key] ?? {}).reduce((a, b) => a + b, 0);
      return back(c, key, `policy set; ${rows} stored rows rewritten`);
    }),
  );
  actions.post('/companies/:key/erasures', (c) =>
    refusing(c, async () => {
      const key = keyOf(c);
      if (!key) return c.json({ error: BAD_KEY }, 400);
      const form = await formOf(c);
      if (!form) return c.json({ error: FORM_EXPECTED }, 400);
      if (form.confirm !== key) return c.json({ error: 'confirm: type the company key to erase the person' }, 400);
      const serviceId = form.serviceId
        ? /^\d{1,9}$/.test(form.serviceId)
          ? Number(form.serviceId)
          : Number.NaN
        : undefined;
      const person = personOf({
        ...(serviceId !== undefined ? { serviceId } : {}),
        ...(form.employeeNumber ? { employeeNumber: form.employeeNumber } : {}),
      });
      if (!person.ok) return c.json({ error: person.error }, 400);
      const done = await o.admin.erase(o.actor(c), key, person.ref);
      o.log.info({ company: key, erasure: done.id }, 'individual erased from the dashboard');
      return back(
        c,
        key,
        `erasure ${done.id}: ${Object.values(done.counts).reduce((a, b) => a + b, 0)} rows rewritten`,
      );
    }),
  );
}

function policyPage(
  key: string,
  company: PersonalDataListing,
  defaults: PersonalDataListing,
  viewer: Viewer,
  flash?: string,
): string {
  const action = (f: string) => company.effective?.[f] ?? 'keep';
  const select = (f: string) =>
    `<select name="${esc(f)}">${PERSONAL_DATA_ACTIONS.map((a) => `<option${a === action(f) ? ' selected' : ''}>${a}</option>`).join('')}</select>`;
  const rows = Object.entries(company.kinds)
    .map(
      ([f, kind]) =>
        `<tr data-field="${esc(f)}"><td>${esc(f)}</td><td>${esc(kind)}</td><td>${holds(viewer, 'admin') ? select(f) : esc(action(f))}</td><td class="muted">${esc(company.fields[f] ? 'this company' : defaults.fields[f] ? 'default' : '')}</td></tr>`,
    )
    .join('');
  const base = `/actions/companies/${encodeURIComponent(key)}`;
  const table = `<table><thead><tr><th>field</th><th>kind</th><th>stored as</th><th>set for</th></tr></thead><tbody>${rows}</tbody></table>`;
  const body = holds(viewer, 'admin')
    ? `<form method="post" action="${base}/personal-data">${table}<button>set the policy and rewrite what is stored</button></form>
<h2>Erase a person</h2><form method="post" action="${base}/erasures"><label>service id <input name="serviceId" size="10"></label> or
<label>employee number <input name="employeeNumber" size="12" autocomplete="off"></label> <label>type the company key to confirm <input name="confirm" size="10" autocomplete="off"></label> <button>erase</button></form>
<p class="muted">Every personal field of that person is blocked everywhere, now and in later syncs.</p>`
    : `${table}<p class="muted">${viewer.canSignIn ? '<a href="/signin">Sign in</a> to change it or erase a person.' : 'Read-only: use wfsync personal-data and wfsync erase.'}</p>`;
  return layout(
    `personal data of ${key}`,
    viewer,
    `${flash ? `<p class="ok">${esc(flash)}</p>` : ''}<h2>Personal data of ${esc(key)}</h2>${company.rewritePending ? '<p class="late">a rewrite of stored rows is pending: wfsync personal-data apply</p>' : ''}${body}`,
  );
}
