import type { Context, Hono } from 'hono';
import type { Logger } from 'pino';
import { isStreamName, type StreamName } from '../resources/index.ts';
import type { Actor } from '../warehouse/audit.ts';
import { FORM_EXPECTED, idParam, readForm } from './input.ts';

/** What the dashboard's buttons do; a hook that is absent has no button. */
export interface OpsActions {
  /** Runs one stream of one company now (in this process, or enqueued); says what happened. */
  runStream?(company: string, stream: StreamName, by: Actor): Promise<string>;
  /** Sends a failed or in-doubt pushed change again; offered by the push module when push is configured. */
  retryPush?(id: number, by: Actor): Promise<string>;
  /** Runs, pauses, resumes or removes a push model; offered by the push module when push is configured. */
  pushModel?(name: string, verb: PushModelVerb, by: Actor): Promise<string>;
  /** Reads one stream of one company again from the start, through the queue or the running start; says what happened. */
  resyncStream?(company: string, stream: StreamName, via: 'api' | 'dashboard', by: Actor): Promise<string>;
}

export const PUSH_MODEL_VERBS = ['run', 'pause', 'resume', 'remove'] as const;
export type PushModelVerb = (typeof PUSH_MODEL_VERBS)[number];

export interface DashboardActionOptions {
  actions?: OpsActions;
  log: Logger;
  companies: () => readonly string[];
  /** Who a signed-in dashboard request acts as. */
  actor: (c: Context) => Actor;
}

/** The overview's buttons: run a stream now, retry a pushed change, act on a push model. */
export function mountDashboardActions(actions: Hono, o: DashboardActionOptions): void {
  mountRunStream(actions, o);
  mountRetryPush(actions, o);
  mountPushModelAction(actions, o);
}

const backToOverview = (c: Context, said: string) => c.redirect(`/?done=${encodeURIComponent(said)}`, 303);

function mountRunStream(actions: Hono, o: DashboardActionOptions): void {
  actions.post('/run', async (c) => {
    const run = o.actions?.runStream;
    if (!run) return c.json({ error: 'no runner in this process' }, 404);
    const form = await readForm(c);
    if (!form) return c.json({ error: FORM_EXPECTED }, 400);
    const company = String(form.company ?? '');
    const stream = String(form.stream ?? '');
    if (!o.companies().includes(company))
      return c.json({ error: `company: "${company.slice(0, 64)}" is not configured` }, 400);
    if (!isStreamName(stream))
      return c.json({ error: `stream: "${stream.slice(0, 64)}" is not a stream of the catalog` }, 400);
    const said = await run(company, stream, o.actor(c));
    o.log.info({ company, stream }, 'stream run requested from the dashboard');
    return backToOverview(c, said);
  });
}

function mountRetryPush(actions: Hono, o: DashboardActionOptions): void {
  actions.post('/retry-push', async (c) => {
    const retry = o.actions?.retryPush;
    if (!retry) return c.json({ error: 'push is not configured' }, 404);
    const form = await readForm(c);
    if (!form) return c.json({ error: FORM_EXPECTED }, 400);
    const id = idParam('id', typeof form.id === 'string' ? form.id : undefined);
    if (!id.ok) return c.json({ error: id.error }, 400);
    const said = await retry(id.value, o.actor(c));
    o.log.info({ changeId: id.value }, 'push retry requested from the dashboard');
    return backToOverview(c, said);
  });
}

function mountPushModelAction(actions: Hono, o: DashboardActionOptions): void {
  actions.post('/push-models/:name/:verb', async (c) => {
    const act = o.actions?.pushModel;
    if (!act) return c.json({ error: 'push is not configured' }, 404);
    const name = c.req.param('name');
    const verb = c.req.param('verb') as PushModelVerb;
    if (!/^[A-Za-z0-9_-]{1,64}$/.test(name))
      return c.json({ error: 'name: expected letters, digits, - or _ (at most 64)' }, 400);
    if (!PUSH_MODEL_VERBS.includes(verb))
      return c.json({ error: `action: expected one of ${PUSH_MODEL_VERBS.join(', ')}` }, 400);
    const said = await act(name, verb, o.actor(c));
    o.log.info({ model: name, action: verb }, 'push model action from the dashboard');
    return backToOverview(c, said);
  });
}
