import type { Context, Hono } from 'hono';
import type { Logger } from 'pino';
import { STREAM_NAMES } from '../resources/index.ts';
import type { Actor } from '../warehouse/audit.ts';
import type { Purged } from '../warehouse/company-records.ts';
import { parseStreamsChange, type CompanyAdmin, type StreamsChangeInput } from './company-admin.ts';
import { acting, FORM_EXPECTED, keyParam, readJson, STATUS } from './company-http.ts';

/**
 * A company's streams turned off or on: the form of its page (`/actions/companies/KEY/streams`, signed in) and the
 * JSON routes (`/api/companies/KEY/streams`, behind the push token, mounted on the companies API).
 */

/** The streams form of a company's page: `streams` ticked (one field per stream), `turn` off or on, `purge`. */
async function readStreamsForm(
  c: Context,
): Promise<{ ok: true; value: StreamsChangeInput; confirm?: string } | { ok: false; error: string }> {
  let form: Record<string, string | File | (string | File)[]>;
  try {
    form = await c.req.parseBody({ all: true });
  } catch {
    return { ok: false, error: FORM_EXPECTED };
  }
  const text = (v: unknown) => (typeof v === 'string' ? v : undefined);
  const turn = text(form.turn);
  if (turn !== 'off' && turn !== 'on') return { ok: false, error: 'turn: expected off or on' };
  const streams = [form.streams ?? []].flat();
  if (streams.some((v) => typeof v !== 'string')) return { ok: false, error: 'streams: expected stream names' };
  const purge = text(form.purge) === 'on' || text(form.purge) === 'true';
  const change = parseStreamsChange({ [turn]: streams, ...(purge ? { purge } : {}) });
  if (!change.ok) return { ok: false, error: change.error.replace(/^(off|on):/, 'streams:') };
  return { ...change, confirm: text(form.confirm) };
}

/** A company's streams, each off or on, in run order. */
function streamsView(off: readonly string[]) {
  return { off: [...off], on: STREAM_NAMES.filter((s) => !off.includes(s)) };
}

/** What a change did, in one line. */
export function switched(key: string, change: StreamsChangeInput, purged?: Purged): string {
  if (!('off' in change))
    return `company ${key}: ${change.on.join(', ')} on again, each from its checkpoint (from the start once purged)`;
  const rows = purged ? Object.values(purged).reduce((a, b) => a + b, 0) : 0;
  return `company ${key}: ${change.off.join(', ')} off${purged ? `; ${rows} rows purged` : '; their rows stay'}`;
}

/** Adds the streams form's action and the JSON routes. */
export function mountStreamRoutes(
  api: Hono,
  actions: Hono,
  o: { admin: CompanyAdmin; log: Logger; actor: (c: Context) => Actor; apiActor: (c: Context) => Actor },
): void {
  const { admin, log } = o;
  actions.post('/companies/:key/streams', (c) =>
    acting(c, async () => {
      const key = keyParam(c);
      if (!key.ok) return key.res;
      const form = await readStreamsForm(c);
      if (!form.ok) return c.json({ error: form.error }, 400);
      // Purging deletes rows for good: the form asks for the company's key typed again.
      if ('off' in form.value && form.value.purge && form.confirm !== key.key)
        return c.json({ error: "confirm: type the company key to purge the streams' rows" }, 400);
      const { purged } = await admin.streams(o.actor(c), key.key, form.value);
      log.info({ company: key.key, change: form.value, purged }, 'streams turned off or on from the dashboard');
      const said = switched(key.key, form.value, purged);
      return c.redirect(`/companies/${encodeURIComponent(key.key)}?done=${encodeURIComponent(said)}`, 303);
    }),
  );

  api.get('/:key/streams', (c) =>
    acting(c, async () => {
      const key = keyParam(c);
      if (!key.ok) return key.res;
      const company = await admin.find(key.key);
      if (!company)
        return c.json(
          { error: `key: company ${key.key} is not added`, kind: 'unknown_company' },
          STATUS.unknown_company,
        );
      return c.json({ key: company.key, ...streamsView(company.streamsOff) });
    }),
  );
  api.post('/:key/streams', (c) =>
    acting(c, async () => {
      const key = keyParam(c);
      if (!key.ok) return key.res;
      const body = await readJson(c);
      if (!body.ok) return c.json({ error: 'body: expected JSON' }, 400);
      const change = parseStreamsChange(body.body);
      if (!change.ok) return c.json({ error: change.error }, 400);
      const { company, purged } = await admin.streams(o.apiActor(c), key.key, change.value);
      log.info({ company: key.key, change: change.value, purged }, 'streams turned off or on through the API');
      return c.json({ key: company.key, ...streamsView(company.streamsOff), ...(purged ? { purged } : {}) });
    }),
  );
}
