import { Hono, type Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type { Logger } from 'pino';
import type { CompanyRecord } from '../warehouse/company-records.ts';
import { companyView, parseApiKey, parseNewCompany, type CompanyAdmin } from './company-admin.ts';
import { acting, FORM_EXPECTED, keyParam, readForm, readJson } from './company-http.ts';
import { mountStreamRoutes } from './company-streams-routes.ts';
import { esc, holds, layout, type Viewer } from './page.ts';
import {
  mountPersonalDataApi,
  mountPersonalDataPages,
  type PersonalDataRoutesOptions,
} from './personal-data-routes.ts';
import { CompanyEventsQuery, RemoveQuery } from './page-queries.ts';
import { readQuery } from '../push/http-query.ts';
import { mountNewFieldsActions, mountNewFieldsApi } from './new-fields-routes.ts';
import { isStreamName, type StreamName } from '../resources/index.ts';
import type { Actor } from '../warehouse/audit.ts';
import { bearer, callerOf, mayActFor, notForCompany, type BearerOptions } from '../push/bearer.ts';

/** Who an API request acts as: its token. */
const apiActor = (c: Context): Actor => callerOf(c).actor;

/**
 * The companies on the ops server: a page (`/companies`) whose forms act for a signed-in operator
 * (`/actions/companies/...`, behind the dashboard's sign-in like every action), and the same actions as JSON
 * routes for automation (`/api/companies...`, behind the push token). No answer carries an API key.
 */

const BODY_MAX_BYTES = 16 * 1024;
const EVENTS_PAGE = 100;
const EVENTS_PAGE_MAX = 1000;

export interface CompanyRoutesOptions {
  admin: CompanyAdmin;
  /** The JSON routes' bearer tokens: WFS_PUSH_TOKEN and the named tokens. */
  bearer: BearerOptions;
  log: Logger;
  viewer: (c: Context) => Viewer;
  /** Who a signed-in page's request acts as. */
  actor: (c: Context) => Actor;
  /** Personal-data policies and erasures, on the same API. */
  personalData?: Omit<PersonalDataRoutesOptions, 'log' | 'admin' | 'actor'>;
  /** Asks for a re-sync of one stream (absent: no route); `known` says which companies it may name. */
  resync?: (company: string, stream: StreamName, via: 'api' | 'dashboard', by: Actor) => Promise<string>;
  known: (company: string) => boolean;
}

/** The company and stream of a re-sync route, or the 400/404 that names the wrong one. */
function resyncTarget(
  c: Context,
  known: (company: string) => boolean,
): { ok: true; company: string; stream: StreamName } | { ok: false; res: Response } {
  const key = keyParam(c);
  if (!key.ok) return key;
  if (!known(key.key))
    return {
      ok: false,
      res: c.json({ error: `key: company "${key.key}" is not configured`, kind: 'unknown_company' }, 404),
    };
  const stream = c.req.param('stream') ?? '';
  if (!isStreamName(stream))
    return {
      ok: false,
      res: c.json({ error: `stream: "${stream.slice(0, 64)}" is not a stream of the catalog` }, 400),
    };
  return { ok: true, company: key.key, stream };
}

/** Reading companies and their timelines needs `read`; anything else (a change, a policy) `admin`. */
const scopeOf = (c: Context) =>
  c.req.method === 'GET' && !c.req.path.endsWith('/personal-data') ? ('read' as const) : ('admin' as const);

/** Adds the companies page and form actions to the ops app, and the JSON routes. */
export function mountCompanies(app: Hono, actions: Hono, o: CompanyRoutesOptions): void {
  const { admin, log, resync } = o;
  app.get('/companies', async (c) => c.html(companiesPage(await admin.list(), o.viewer(c), c.req.query('done'))));
  mountCompanyActions(actions, o);
  if (resync) mountResyncAction(actions, o, resync);
  const api = companyApi(o);
  mountCompanyApiChanges(api, o);
  mountStreamRoutes(api, actions, { admin, log, actor: o.actor, apiActor });
  mountCompanyEvents(api, admin);
  if (resync) mountResyncApi(api, o, resync);
  if (o.personalData) {
    mountPersonalDataApi(api, { ...o.personalData, log, admin, actor: apiActor });
    mountPersonalDataPages(app, actions, { ...o.personalData, log, admin, actor: o.actor, viewer: o.viewer });
    mountNewFieldsApi(api, { ...o.personalData, log, admin, resync, actor: apiActor });
    mountNewFieldsActions(actions, { ...o.personalData, log, admin, resync, actor: o.actor });
  }
  app.route('/api/companies', api);
}

type Resync = NonNullable<CompanyRoutesOptions['resync']>;

/** Back to the companies page, saying what was done. */
const done = (c: Context, said: string) => c.redirect(`/companies?done=${encodeURIComponent(said)}`, 303);

/** The companies page's forms: add, pause, resume, rotate the API key, remove. */
function mountCompanyActions(actions: Hono, o: CompanyRoutesOptions): void {
  const { admin, log } = o;
  actions.post('/companies', (c) =>
    acting(c, async () => {
      const form = await readForm(c);
      if (!form) return c.json({ error: FORM_EXPECTED }, 400);
      const parsed = parseNewCompany(form);
      if (!parsed.ok) return c.json({ error: parsed.error }, 400);
      const added = await admin.add(o.actor(c), parsed.value);
      log.info({ company: added.key }, 'company added from the dashboard');
      return done(c, `company ${added.key} is added; its first runs start within a refresh`);
    }),
  );
  for (const [path, act, said] of [
    ['pause', (by: Actor, k: string) => admin.pause(by, k), 'paused'],
    ['resume', (by: Actor, k: string) => admin.resume(by, k), 'resumed'],
  ] as const) {
    actions.post(`/companies/:key/${path}`, (c) =>
      acting(c, async () => {
        const key = keyParam(c);
        if (!key.ok) return key.res;
        await act(o.actor(c), key.key);
        log.info({ company: key.key }, `company ${said} from the dashboard`);
        return done(c, `company ${key.key} is ${said}`);
      }),
    );
  }
  actions.post('/companies/:key/rotate-key', (c) =>
    acting(c, async () => {
      const key = keyParam(c);
      if (!key.ok) return key.res;
      const form = await readForm(c);
      if (!form) return c.json({ error: FORM_EXPECTED }, 400);
      const apiKey = parseApiKey(form);
      if (!apiKey.ok) return c.json({ error: apiKey.error }, 400);
      await admin.rotateKey(o.actor(c), key.key, apiKey.value);
      log.info({ company: key.key }, 'company API key rotated from the dashboard');
      return done(c, `the API key of company ${key.key} is replaced`);
    }),
  );
  actions.post('/companies/:key/remove', (c) =>
    acting(c, async () => {
      const key = keyParam(c);
      if (!key.ok) return key.res;
      const form = await readForm(c);
      if (!form) return c.json({ error: FORM_EXPECTED }, 400);
      const purge = form.purge === 'on' || form.purge === 'true';
      // Purging deletes rows for good: the form asks for the company's key typed again.
      if (purge && form.confirm !== key.key)
        return c.json({ error: 'confirm: type the company key to purge its rows' }, 400);
      const { purged } = await admin.remove(o.actor(c), key.key, { purge });
      log.info({ company: key.key, purged }, 'company removed from the dashboard');
      return done(
        c,
        `company ${key.key} is removed${purged ? `, ${Object.values(purged).reduce((a, b) => a + b, 0)} rows purged` : ''}`,
      );
    }),
  );
}

/** The company page's re-sync button. */
function mountResyncAction(actions: Hono, o: CompanyRoutesOptions, resync: Resync): void {
  actions.post('/companies/:key/streams/:stream/resync', (c) =>
    acting(c, async () => {
      const target = resyncTarget(c, o.known);
      if (!target.ok) return target.res;
      const said = await resync(target.company, target.stream, 'dashboard', o.actor(c));
      o.log.info({ company: target.company, stream: target.stream }, 're-sync asked for from the dashboard');
      return c.redirect(`/companies/${encodeURIComponent(target.company)}?done=${encodeURIComponent(said)}`, 303);
    }),
  );
}

/** The JSON routes' app, behind the body limit and the bearer token, with the list and the add. */
function companyApi(o: CompanyRoutesOptions): Hono {
  const { admin, log } = o;
  const api = new Hono();
  api.use(
    '*',
    bodyLimit({
      maxSize: BODY_MAX_BYTES,
      onError: (c) => c.json({ error: `body: larger than ${BODY_MAX_BYTES} bytes` }, 413),
    }),
  );
  api.use('*', bearer(o.bearer, scopeOf));
  // A token limited to companies acts on those only.
  for (const path of ['/:key', '/:key/*'])
    api.use(path, async (c, next) => {
      const key = c.req.param('key') ?? '';
      return mayActFor(callerOf(c), key) ? next() : notForCompany(c, key);
    });
  api.get('/', async (c) => c.json((await admin.list()).filter((x) => mayActFor(callerOf(c), x.key)).map(companyView)));
  api.post('/', (c) =>
    acting(c, async () => {
      const body = await readJson(c);
      if (!body.ok) return c.json({ error: 'body: expected JSON' }, 400);
      const parsed = parseNewCompany(body.body);
      if (!parsed.ok) return c.json({ error: parsed.error }, 400);
      if (!mayActFor(callerOf(c), parsed.value.key)) return notForCompany(c, parsed.value.key);
      const added = await admin.add(apiActor(c), parsed.value);
      log.info({ company: added.key }, 'company added through the API');
      return c.json(companyView(added), 201);
    }),
  );
  return api;
}

/** The JSON routes that change one company: pause, resume, rotate its API key, remove it. */
function mountCompanyApiChanges(api: Hono, o: CompanyRoutesOptions): void {
  const { admin, log } = o;
  const answer = (c: Context, company: CompanyRecord) => c.json(companyView(company));
  for (const [path, act] of [
    ['pause', (by: Actor, k: string) => admin.pause(by, k)],
    ['resume', (by: Actor, k: string) => admin.resume(by, k)],
  ] as const) {
    api.post(`/:key/${path}`, (c) =>
      acting(c, async () => {
        const key = keyParam(c);
        if (!key.ok) return key.res;
        const changed = await act(apiActor(c), key.key);
        log.info({ company: key.key }, `company ${changed.paused ? 'paused' : 'resumed'} through the API`);
        return answer(c, changed);
      }),
    );
  }
  api.post('/:key/rotate-key', (c) =>
    acting(c, async () => {
      const key = keyParam(c);
      if (!key.ok) return key.res;
      const body = await readJson(c);
      if (!body.ok) return c.json({ error: 'body: expected JSON' }, 400);
      const apiKey = parseApiKey(body.body);
      if (!apiKey.ok) return c.json({ error: apiKey.error }, 400);
      const rotated = await admin.rotateKey(apiActor(c), key.key, apiKey.value);
      log.info({ company: key.key }, 'company API key rotated through the API');
      return answer(c, rotated);
    }),
  );
  api.delete('/:key', (c) =>
    acting(c, async () => {
      const key = keyParam(c);
      if (!key.ok) return key.res;
      const q = readQuery(c, RemoveQuery);
      if (!q.ok) return q.res;
      const purge = q.query.purge === true;
      const { removed, purged } = await admin.remove(apiActor(c), key.key, { purge });
      log.info({ company: key.key, purged }, 'company removed through the API');
      return c.json({ removed: companyView(removed), ...(purged ? { purged } : {}) });
    }),
  );
}

/** A company's timeline, newest first, a page at a time. */
function mountCompanyEvents(api: Hono, admin: CompanyAdmin): void {
  api.get('/:key/events', async (c) => {
    const key = keyParam(c);
    if (!key.ok) return key.res;
    const q = readQuery(c, CompanyEventsQuery);
    if (!q.ok) return q.res;
    const { since, before, limit } = q.query;
    const size = Math.min(limit ?? EVENTS_PAGE, EVENTS_PAGE_MAX);
    const events = await admin.timeline(key.key, { since, beforeId: before, limit: size });
    return c.json({ events, next: events.length === size ? events.at(-1)!.id : null });
  });
}

/** Asks for a re-sync of one stream; 202 with what will happen. */
function mountResyncApi(api: Hono, o: CompanyRoutesOptions, resync: Resync): void {
  api.post('/:key/streams/:stream/resync', (c) =>
    acting(c, async () => {
      const target = resyncTarget(c, o.known);
      if (!target.ok) return target.res;
      const said = await resync(target.company, target.stream, 'api', apiActor(c));
      o.log.info({ company: target.company, stream: target.stream }, 're-sync asked for through the API');
      return c.json({ company: target.company, stream: target.stream, message: said }, 202);
    }),
  );
}

function companiesPage(companies: CompanyRecord[], viewer: Viewer, flash?: string): string {
  const act = (c: CompanyRecord) => {
    if (!holds(viewer, 'operator')) return '';
    if (c.managedBy === 'environment') return '<span class="muted">change it in WFS_COMPANIES or WFS_API_KEY</span>';
    const base = `/actions/companies/${encodeURIComponent(c.key)}`;
    const pause = `<form class="inline" method="post" action="${base}/${c.paused ? 'resume' : 'pause'}"><button>${c.paused ? 'resume' : 'pause'}</button></form>`;
    if (!holds(viewer, 'admin')) return pause;
    return `${pause}
<form class="inline" method="post" action="${base}/rotate-key"><input type="password" name="apiKey" placeholder="new API key" autocomplete="off" required><button>rotate key</button></form>
<form class="inline" method="post" action="${base}/remove"><label><input type="checkbox" name="purge"> purge its rows, confirm key</label> <input name="confirm" size="10" autocomplete="off"><button>remove</button></form>`;
  };
  const rows = companies
    .map(
      (
        c,
      ) => `<tr data-company="${esc(c.key)}"><td><a href="/companies/${encodeURIComponent(c.key)}">${esc(c.key)}</a> <a class="muted" href="/companies/${encodeURIComponent(c.key)}/personal-data">personal data</a></td><td>${esc(c.baseUrl)}</td><td>${esc(c.formIds.join(', ') || '-')}</td><td>${esc(c.runTypeIds.join(', ') || '-')}</td>
<td>${esc(companyView(c).rateLimit)}</td><td class="${c.paused ? 'late' : 'ok'}">${c.paused ? 'paused' : 'active'}</td><td>${esc(c.streamsOff.join(', ') || '-')}</td><td>${esc(c.managedBy)}</td><td>${act(c)}</td></tr>`,
    )
    .join('');
  const add = holds(viewer, 'admin')
    ? `<h2>Add a company</h2><form method="post" action="/actions/companies">
<label>key <input name="key" required pattern="[A-Za-z0-9_-]{1,40}"></label> <label>base URL <input name="baseUrl" required size="30"></label>
<label>API key <input type="password" name="apiKey" required autocomplete="off"></label> <label>form ids <input name="formIds" size="8" placeholder="12,15"></label>
<label>run-log type ids <input name="runTypeIds" size="8" placeholder="1,2"></label> <label>budget <input name="rateLimit" size="8" placeholder="100/60s"></label>
<button>add</button></form><p class="muted">The key is checked with one request to the service before the company is added.</p>`
    : viewer.signedIn
      ? '<p class="muted">An admin adds, rotates and removes companies.</p>'
      : viewer.canSignIn
        ? '<p class="muted"><a href="/signin">Sign in</a> to add, pause, resume, rotate or remove companies.</p>'
        : '<p class="muted">Read-only: set WFS_DASHBOARD_TOKEN to act on companies here, or use wfsync companies.</p>';
  return layout(
    'companies',
    viewer,
    `${flash ? `<p class="ok">${esc(flash)}</p>` : ''}<h2>Companies</h2>
<table><thead><tr><th>key</th><th>base URL</th><th>form ids</th><th>run-log types</th><th>budget</th><th>state</th><th>streams off</th><th>managed by</th><th></th></tr></thead>
<tbody>${rows || '<tr><td colspan="9" class="muted">none</td></tr>'}</tbody></table>
<p class="muted">Streams are turned off and on from each company's page (signed in), with wfsync companies streams, or POST /api/companies/KEY/streams.</p>${add}`,
  );
}
