import type { Context, Hono } from 'hono';
import type { Logger } from 'pino';
import { z } from 'zod';
import { isStreamName, type StreamName } from '../resources/index.ts';
import { COMPANY_KEY } from '../warehouse/company-records.ts';
import type { Warehouse } from '../warehouse/connection.ts';
import type { PersonalData } from '../warehouse/personal-data/data.ts';
import type { Actor } from '../warehouse/audit.ts';
import {
  listNewFields,
  newFieldModes,
  type ListedField,
  type ResyncDue,
} from '../warehouse/personal-data/new-fields.ts';
import { FIELD_CLASSES, NEW_FIELD_MODES, type NewFieldMode } from '../warehouse/tables/personal-data.ts';
import type { CompanyAdmin } from './company-admin.ts';
import { esc, holds, type Viewer } from './page.ts';
import { FORM_EXPECTED, readForm, readJson } from './company-http.ts';
import { refusing } from './personal-data-routes.ts';

/**
 * The fields the service added, on the ops server: their classes and the company's mode for new fields, as JSON
 * (`GET /api/companies/KEY/fields`, `PUT .../fields/FIELD`, `PUT .../new-fields`, behind the push token) and as
 * forms on the company's page for a signed-in operator (`/actions/companies/KEY/fields/FIELD`, `.../new-fields`).
 */

export interface NewFieldsRoutesOptions {
  warehouse: Warehouse;
  data: PersonalData;
  log: Logger;
  /** Classifies fields and sets modes, audited. */
  admin: CompanyAdmin;
  /** Who a request acts as. */
  actor: (c: Context) => Actor;
  /** Asks for a re-sync of one stream (a field held until now comes with its next complete read). */
  resync?: (company: string, stream: StreamName, via: 'api' | 'dashboard', by: Actor) => Promise<string>;
}

const ClassBody = z.strictObject({ class: z.enum(FIELD_CLASSES) });
const ModeBody = z.strictObject({ mode: z.enum(NEW_FIELD_MODES) });

/** The first problem of a body zod refused, naming its field. */
function refusal(error: z.ZodError): string {
  const issue = error.issues[0]!;
  if (issue.code === 'unrecognized_keys') return `${issue.keys[0]}: unknown field`;
  const field = issue.path.length > 0 ? issue.path.map(String).join('.') : 'body';
  return `${field}: ${issue.message}`;
}

const keyOf = (c: Context) => {
  const key = c.req.param('key') ?? '';
  return COMPANY_KEY.test(key) ? key : undefined;
};

/** A field's path as the URL gives it: text of at most 200 characters, without control characters. */
const fieldOf = (c: Context) => {
  const field = c.req.param('field') ?? '';
  return field.length > 0 && field.length <= 200 && !/\p{Cc}/u.test(field) ? field : undefined;
};

const BAD_KEY = 'key: expected letters, digits, - or _ (at most 40)';
const BAD_FIELD = 'field: expected a field path of at most 200 characters';

/** Asks for each re-sync due; what each ask said. */
async function resyncAll(o: NewFieldsRoutesOptions, c: Context, due: readonly ResyncDue[], via: 'api' | 'dashboard') {
  const said: string[] = [];
  if (!o.resync) return said;
  for (const d of due) if (isStreamName(d.stream)) said.push(await o.resync(d.company, d.stream, via, o.actor(c)));
  return said;
}

/** Adds the JSON routes to the companies API (`api` is mounted at /api/companies, behind its token). */
export function mountNewFieldsApi(api: Hono, o: NewFieldsRoutesOptions): void {
  const wh = o.warehouse;
  api.get('/:key/fields', (c) =>
    refusing(c, async () => {
      const key = keyOf(c);
      if (!key) return c.json({ error: BAD_KEY }, 400);
      const modes = await newFieldModes(wh);
      if (modes[key] === undefined)
        return c.json({ error: `key: unknown company "${key}"`, kind: 'unknown_company' }, 404);
      return c.json({ company: key, newFields: modes[key], fields: await listNewFields(wh, o.data, key) });
    }),
  );
  api.put('/:key/fields/:field', (c) =>
    refusing(c, async () => {
      const key = keyOf(c);
      if (!key) return c.json({ error: BAD_KEY }, 400);
      const field = fieldOf(c);
      if (!field) return c.json({ error: BAD_FIELD }, 400);
      const body = await readJson(c);
      if (!body.ok) return c.json({ error: 'body: expected JSON' }, 400);
      const parsed = ClassBody.safeParse(body.body);
      if (!parsed.success) return c.json({ error: refusal(parsed.error) }, 400);
      const done = await o.admin.classify(o.actor(c), key, field, parsed.data.class);
      o.log.info({ company: key, field, class: done.class }, 'field classified through the API');
      const resyncs = await resyncAll(o, c, done.resync, 'api');
      return c.json({ ...done, rewritten: done.rewritten[key] ?? {}, resyncs });
    }),
  );
  api.put('/:key/new-fields', (c) =>
    refusing(c, async () => {
      const key = keyOf(c);
      if (!key) return c.json({ error: BAD_KEY }, 400);
      const body = await readJson(c);
      if (!body.ok) return c.json({ error: 'body: expected JSON' }, 400);
      const parsed = ModeBody.safeParse(body.body);
      if (!parsed.success) return c.json({ error: refusal(parsed.error) }, 400);
      const done = await o.admin.newFields(o.actor(c), key, parsed.data.mode);
      o.log.info({ company: key, mode: done.mode }, 'new-fields mode set through the API');
      const resyncs = await resyncAll(o, c, done.resync, 'api');
      return c.json({ ...done, rewritten: done.rewritten[key] ?? {}, resyncs });
    }),
  );
}

/** Adds the dashboard's actions (behind its sign-in): classify a field, set the mode; back to the company's page. */
export function mountNewFieldsActions(actions: Hono, o: NewFieldsRoutesOptions): void {
  const back = (c: Context, key: string, said: string) =>
    c.redirect(`/companies/${encodeURIComponent(key)}?done=${encodeURIComponent(said)}#new-fields`, 303);
  actions.post('/companies/:key/fields/:field', (c) =>
    refusing(c, async () => {
      const key = keyOf(c);
      if (!key) return c.json({ error: BAD_KEY }, 400);
      const field = fieldOf(c);
      if (!field) return c.json({ error: BAD_FIELD }, 400);
      const form = await readForm(c);
      if (!form) return c.json({ error: FORM_EXPECTED }, 400);
      const done = await o.admin.classify(o.actor(c), key, field, form.class);
      o.log.info({ company: key, field, class: done.class }, 'field classified from the dashboard');
      const resyncs = await resyncAll(o, c, done.resync, 'dashboard');
      return back(c, key, [`${field} is ${done.class}`, ...resyncs].join('; '));
    }),
  );
  actions.post('/companies/:key/new-fields', (c) =>
    refusing(c, async () => {
      const key = keyOf(c);
      if (!key) return c.json({ error: BAD_KEY }, 400);
      const form = await readForm(c);
      if (!form) return c.json({ error: FORM_EXPECTED }, 400);
      const done = await o.admin.newFields(o.actor(c), key, form.mode);
      o.log.info({ company: key, mode: done.mode }, 'new-fields mode set from the dashboard');
      const resyncs = await resyncAll(o, c, done.resync, 'dashboard');
      return back(
        c,
        key,
        [`new fields ${done.mode === 'hold' ? 'held until classified' : 'kept'}`, ...resyncs].join('; '),
      );
    }),
  );
}

/** The company page's section on its new fields: each with its class, and signed in, the forms that set them. */
export function newFieldsSection(
  company: string,
  fields: readonly ListedField[],
  mode: NewFieldMode,
  viewer: Viewer,
  canAct: boolean,
): string {
  const base = `/actions/companies/${encodeURIComponent(company)}`;
  const act = holds(viewer, 'admin') && canAct;
  const byField = new Map(fields.map((f) => [f.field_path, f]));
  const select = (f: ListedField) =>
    `<form class="inline" method="post" action="${esc(`${base}/fields/${encodeURIComponent(f.field_path)}`)}"><select name="class">${FIELD_CLASSES.map((c) => `<option${c === f.class ? ' selected' : ''}>${c}</option>`).join('')}</select><button>classify</button></form>`;
  const rows = [...byField.values()]
    .map(
      (f) =>
        `<tr data-field="${esc(f.field_path)}"><td><code>${esc(f.field_path)}</code></td><td class="${f.class === 'unclassified' ? 'late' : ''}">${esc(f.class)}</td><td>${f.held ? 'held' : 'stored'}</td><td>${act ? select(f) : ''}</td></tr>`,
    )
    .join('');
  const modeForm = act
    ? `<form class="inline" method="post" action="${base}/new-fields"><select name="mode">${NEW_FIELD_MODES.map((m) => `<option${m === mode ? ' selected' : ''}>${m}</option>`).join('')}</select><button>set</button></form>`
    : '';
  return `<h2 id="new-fields">New fields</h2><p class="muted">Unclassified fields are ${mode === 'hold' ? 'held: none of their values is stored until classified' : 'kept in <code>_extra</code>'}. ${modeForm}</p>
${rows ? `<table id="field-classes"><thead><tr><th>field</th><th>class</th><th>values</th><th></th></tr></thead><tbody>${rows}</tbody></table>` : ''}`;
}
