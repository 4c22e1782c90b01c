import { randomUUID } from 'node:crypto';
import { serve, type ServerType } from '@hono/node-server';
import type { Queue } from 'bullmq';
import { Hono, type Context, type Env, type MiddlewareHandler, type Schema } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { HTTPException } from 'hono/http-exception';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { DEFAULTS, type OidcConfig, type RateLimit } from '../config.ts';
import type { Warehouse } from '../warehouse/connection.ts';
import { DashboardAuth, operatorOf, type SessionOptions } from './auth.ts';
import { guardActions } from './roles.ts';
import { mountOidcSignIn, mountSignOut, mountTokenSignIn } from './signin-routes.ts';
import { OidcSignIn } from './oidc.ts';
import { statusCharts } from './charts.ts';
import type { ScheduleOptions } from '../queue/schedules.ts';
import type { LiveFigures } from './live.ts';
import type { Metrics } from './metrics.ts';
import {
  holds,
  inProcessPage,
  rejectsPage,
  signInPage,
  type InProcessRun,
  type RecordView,
  type Viewer,
} from './page.ts';
import { companyPage } from './company-page.ts';
import { overviewPage } from './overview-page.ts';
import { filterCompanies, isStateFilter, readOverview, STATE_FILTERS, type StateFilter } from './overview.ts';
import { listEvents } from '../warehouse/events.ts';
import { listResyncs } from '../warehouse/resyncs.ts';
import { readUsage } from '../warehouse/usage.ts';
import { usageChart } from './usage-chart.ts';
import { FORM_EXPECTED, idParam, nameParam, readForm } from './input.ts';
import type { CompanyAdmin } from './company-admin.ts';
import { mountCompanies } from './companies-routes.ts';
import { auditApi } from './audit-routes.ts';
import { personalData } from '../resources/index.ts';
import { listNewFields, newFieldModes } from '../warehouse/personal-data/new-fields.ts';
import { newFieldsSection } from './new-fields-routes.ts';
import { queueBoard } from './queues.ts';
import { readiness } from './ready.ts';
import { readPushModels, readPushSummary, readRejects, readRetryablePushes, readStatus } from './status.ts';
import { listSchemaChanges } from '../warehouse/schema-changes.ts';
import { isStreamName, type StreamName } from '../resources/index.ts';
import { audited, listAudit, type Actor } from '../warehouse/audit.ts';

/** Companies on one page of the overview: a thousand stay well under 300 KB. */
const OVERVIEW_PAGE = 1000;
/** The newest schema changes the overview lists; each company's page lists all of its own. */
const OVERVIEW_SCHEMA_CHANGES = 50;
/** Companies on one page of /status, by default and at most. */
const STATUS_PAGE = 50;
const STATUS_PAGE_MAX = 500;
const TIMELINE_PAGE = 50;
const STATE_NAMES = STATE_FILTERS.join(', ');

/** The dashboard's forms hold a token or a company and stream: nothing near this size. */
const FORM_MAX_BYTES = 16 * 1024;

/** An HTTP app another module serves under a path of this server (the push API under /push). */
export interface MountedApp {
  path: string;
  app: Hono<Env, Schema, string>;
}

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

export interface OpsServerOptions {
  warehouse: Warehouse;
  port: number;
  host?: string;
  log: Logger;
  metrics: Metrics;
  live: LiveFigures;
  /** Companies: every catalog stream of each shows, run or not (a function: the companies table changes while it runs). */
  companies: readonly string[] | (() => readonly string[]);
  /** Each company's budget, drawn against its requests per minute on the status page. */
  budget?: (company: string) => RateLimit | undefined;
  schedule: ScheduleOptions;
  /** BullMQ queues for /queues; absent when jobs run in-process. */
  queues?: readonly Queue[];
  /** Checked by /ready when jobs go through Redis. */
  redis?: Redis;
  /** The companies page and its actions, and the JSON routes under /api/companies (behind `pushToken`). */
  companyAdmin?: CompanyAdmin;
  /** WFS_PUSH_TOKEN: the bearer token of the JSON routes. */
  pushToken?: string;
  /** WFS_DASHBOARD_TOKEN: the one admin's sign-in, when no identity provider is set. */
  dashboardToken?: string;
  /** Sign-in through an OpenID Connect identity provider. */
  oidc?: OidcConfig;
  /** How long a dashboard session lasts, and whether its cookie is HTTPS-only. */
  sessions?: SessionOptions;
  actions?: OpsActions;
  apps?: readonly MountedApp[];
  /** How long the oldest queued run has waited, in seconds (null when none waits); absent without a queue. */
  scheduleDelay?: () => Promise<number | null>;
  /** Extra facts for /status (the schedule, queue counts). */
  extra?: () => Promise<Record<string, unknown>>;
}

export interface OpsServer {
  url: string;
  /** The app served: its routes are what the server answers. */
  app: Hono;
  close(): Promise<void>;
}

/** The operator's HTTP side: status page, rejects, queues, metrics, health and readiness, and mounted apps. */
export function createOpsApp(opts: OpsServerOptions): Hono {
  const app = new Hono();
  const { warehouse: wh } = opts;
  // With an identity provider, everyone signs in by name: the shared dashboard token no longer does.
  const auth = new DashboardAuth(wh, opts.oidc ? undefined : opts.dashboardToken, opts.sessions);
  const oidc = opts.oidc ? new OidcSignIn(opts.oidc, wh) : undefined;
  const canSignIn = () => auth.tokenSignIn || !!oidc;
  const viewer = (c: Context): Viewer => {
    const who = operatorOf(c);
    return { signedIn: !!who, canSignIn: canSignIn(), actor: who?.actor, role: who?.role, oidc: !!oidc };
  };
  /** Who a signed-in dashboard request acts as (the actions' guard lets no one else through). */
  const actor = (c: Context): Actor => operatorOf(c)?.actor ?? 'unknown';
  const records = recordView(canSignIn, viewer, opts.host ?? DEFAULTS.httpHost);
  const companies = () => (typeof opts.companies === 'function' ? opts.companies() : opts.companies);
  const noStore = async (c: { header(k: string, v: string): void }, next: () => Promise<void>) => {
    await next();
    c.header('cache-control', 'no-store');
    // The dashboard's buttons act: no other site may frame them, and no answer is sniffed into markup.
    c.header('x-frame-options', 'DENY');
    c.header('x-content-type-options', 'nosniff');
  };

  app.onError((err, c) => {
    if (err instanceof HTTPException && err.status < 500) return err.getResponse();
    return internalError(c, opts.log, { err });
  });
  app.use('*', noStore);
  app.use('*', plainText);
  app.use('*', auth.resolve());
  const forms = bodyLimit({
    maxSize: FORM_MAX_BYTES,
    onError: (c) => c.json({ error: `body: larger than ${FORM_MAX_BYTES} bytes` }, 413),
  });
  for (const path of ['/signin', '/signout', '/actions/*', '/queues/*']) app.use(path, forms);

  app.get('/health', (c) => c.json({ ok: true }));
  app.get('/ready', async (c) => {
    const r = await readiness(wh, opts.redis);
    return c.json(r, r.ready ? 200 : 503);
  });
  app.get('/metrics', async (c) =>
    c.body(await opts.metrics.render(), 200, { 'content-type': opts.metrics.contentType }),
  );
  const overview = () => readOverview(wh, { companies: companies(), schedule: opts.schedule, budget: opts.budget });
  /** The search and state filter of the overview and /status, or the 400 naming the bad one. */
  const filterOf = (
    c: Context,
    searchName: string,
  ): { ok: true; search?: string; state?: StateFilter } | { ok: false; error: string } => {
    const search = nameParam(searchName, c.req.query(searchName));
    if (!search.ok) return search;
    const state = c.req.query('state') || undefined;
    if (state !== undefined && !isStateFilter(state))
      return { ok: false, error: `state: expected one of ${STATE_NAMES}` };
    return { ok: true, search: search.value, state };
  };

  // Pages of companies in key order: the cursor is the last key of the page before.
  app.get('/status', async (c) => {
    const f = filterOf(c, 'company');
    if (!f.ok) return c.json({ error: f.error }, 400);
    const cursor = nameParam('cursor', c.req.query('cursor'));
    if (!cursor.ok) return c.json({ error: cursor.error }, 400);
    const limitText = c.req.query('limit');
    const limit = limitText === undefined || limitText === '' ? undefined : idParam('limit', limitText);
    if (limit && !limit.ok) return c.json({ error: limit.error }, 400);
    const size = Math.min(limit?.value ?? STATUS_PAGE, STATUS_PAGE_MAX);
    const o = await overview();
    // ?company= names one company exactly (the overview's ?q= searches part of a key).
    const matched = filterCompanies(o.companies, { state: f.state })
      .filter((s) => (!f.search || s.company === f.search) && (!cursor.value || s.company > cursor.value))
      .sort((a, b) => (a.company < b.company ? -1 : 1));
    const page = matched.slice(0, size);
    const keys = page.map((s) => s.company);
    const status = await readStatus(wh, { companies: companies(), only: keys, schedule: opts.schedule });
    const shown = new Set(keys);
    return c.json({
      counts: o.counts,
      total: o.total,
      companies: page,
      ...status,
      keys: opts.live.keys().filter((k) => shown.has(k.company)),
      nextCursor: matched.length > size ? keys.at(-1) : null,
      ...(await opts.extra?.()),
    });
  });

  app.get('/', async (c) => {
    const v = viewer(c);
    const f = filterOf(c, 'q');
    if (!f.ok) return c.json({ error: f.error }, 400);
    const pageText = c.req.query('page');
    const pageNo = pageText === undefined || pageText === '' ? undefined : idParam('page', pageText);
    if (pageNo && !pageNo.ok) return c.json({ error: pageNo.error }, 400);
    const o = await overview();
    const matched = filterCompanies(o.companies, f);
    const page = pageNo?.value ?? 1;
    const retryable = opts.actions?.retryPush ? await readRetryablePushes(wh) : undefined;
    const models = opts.actions?.pushModel ? await readPushModels(wh) : undefined;
    return c.html(
      overviewPage({
        overview: o,
        shown: matched.slice((page - 1) * OVERVIEW_PAGE, page * OVERVIEW_PAGE),
        matched: matched.length,
        filter: { search: f.search, state: f.state },
        page,
        pageSize: OVERVIEW_PAGE,
        scheduleDelaySeconds: opts.scheduleDelay ? await opts.scheduleDelay() : undefined,
        push: await readPushSummary(wh),
        retryable,
        viewer: v,
        records: records(c),
        models,
        schemaChanges: await listSchemaChanges(wh, { limit: OVERVIEW_SCHEMA_CHANGES }),
        flash: c.req.query('done'),
        now: Date.now(),
      }),
    );
  });

  app.get('/companies/:key', async (c) => {
    const key = nameParam('key', c.req.param('key'));
    if (!key.ok || !key.value) return c.json({ error: key.ok ? 'key: required' : key.error }, 400);
    const company = key.value;
    const beforeText = c.req.query('before');
    const before = beforeText === undefined || beforeText === '' ? undefined : idParam('before', beforeText);
    if (before && !before.ok) return c.json({ error: before.error }, 400);
    const status = await readStatus(wh, { companies: companies(), only: [company], schedule: opts.schedule });
    if (!companies().includes(company) && status.streams.length === 0)
      return c.json({ error: `key: company "${company}" is not known` }, 404);
    const events = await listEvents(wh, { companyKey: company, beforeId: before?.value, limit: TIMELINE_PAGE });
    return c.html(
      companyPage({
        company,
        status,
        keys: opts.live.keys().filter((k) => k.company === company),
        viewer: viewer(c),
        canRun: !!opts.actions?.runStream,
        canResync: !!opts.actions?.resyncStream,
        canSwitch: !!opts.companyAdmin,
        charts: await statusCharts(wh, { companies: [company], live: opts.live, budget: opts.budget }),
        usage: await companyUsage(wh, company),
        events,
        schemaChanges: await listSchemaChanges(wh, { companyKey: company }),
        newFields: newFieldsSection(
          company,
          await listNewFields(wh, personalData, company),
          (await newFieldModes(wh))[company] ?? 'keep',
          viewer(c),
          !!opts.companyAdmin,
        ),
        resyncs: await listResyncs(wh, company),
        olderThan: events.length === TIMELINE_PAGE ? events.at(-1)!.id : undefined,
        audit: await listAudit(wh, { company, limit: TIMELINE_PAGE }),
        flash: c.req.query('done'),
        now: Date.now(),
      }),
    );
  });

  app.get('/rejects', async (c) => {
    const company = nameParam('company', c.req.query('company'));
    const stream = nameParam('stream', c.req.query('stream'));
    const beforeText = c.req.query('before');
    const beforeId = beforeText === undefined || beforeText === '' ? undefined : idParam('before', beforeText);
    for (const p of [company, stream, beforeId]) if (p && !p.ok) return c.json({ error: p.error }, 400);
    const filter = { company: company.ok ? company.value : undefined, stream: stream.ok ? stream.value : undefined };
    const before = beforeId?.ok ? beforeId.value : undefined;
    const limit = 50;
    const rejects = await readRejects(wh, { ...filter, before, limit });
    return c.html(
      rejectsPage(rejects, filter, viewer(c), records(c), rejects.length === limit ? rejects.at(-1)!.id : undefined),
    );
  });

  const signIn = { auth, warehouse: wh, log: opts.log, viewer };
  if (oidc) mountOidcSignIn(app, { ...signIn, oidc });
  else mountTokenSignIn(app, signIn);
  mountSignOut(app, signIn);

  const actions = new Hono();
  actions.use('*', guardActions(canSignIn));
  actions.post('/run', async (c) => {
    const run = opts.actions?.runStream;
    if (!run) return c.json({ error: 'no runner in this process' }, 404);
    const form = await readForm(c);
    if (!form) return c.json({ error: FORM_EXPECTED }, 400);
    const company = String(form.company ?? '');
    const stream = String(form.stream ?? '');
    if (!companies().includes(company))
      return c.json({ error: `company: "${company.slice(0, 64)}" is not configured` }, 400);
    if (!isStreamName(stream))
      return c.json({ error: `stream: "${stream.slice(0, 64)}" is not a stream of the catalog` }, 400);
    const said = await run(company, stream, actor(c));
    opts.log.info({ company, stream }, 'stream run requested from the dashboard');
    return c.redirect(`/?done=${encodeURIComponent(said)}`, 303);
  });
  actions.post('/retry-push', async (c) => {
    const retry = opts.actions?.retryPush;
    if (!retry) return c.json({ error: 'push is not configured' }, 404);
    const form = await readForm(c);
    if (!form) return c.json({ error: FORM_EXPECTED }, 400);
    const id = idParam('id', typeof form.id === 'string' ? form.id : undefined);
    if (!id.ok) return c.json({ error: id.error }, 400);
    const said = await retry(id.value, actor(c));
    opts.log.info({ changeId: id.value }, 'push retry requested from the dashboard');
    return c.redirect(`/?done=${encodeURIComponent(said)}`, 303);
  });
  actions.post('/push-models/:name/:verb', async (c) => {
    const act = opts.actions?.pushModel;
    if (!act) return c.json({ error: 'push is not configured' }, 404);
    const name = c.req.param('name');
    const verb = c.req.param('verb') as PushModelVerb;
    if (!/^[A-Za-z0-9_-]{1,64}$/.test(name))
      return c.json({ error: 'name: expected letters, digits, - or _ (at most 64)' }, 400);
    if (!PUSH_MODEL_VERBS.includes(verb))
      return c.json({ error: `action: expected one of ${PUSH_MODEL_VERBS.join(', ')}` }, 400);
    const said = await act(name, verb, actor(c));
    opts.log.info({ model: name, action: verb }, 'push model action from the dashboard');
    return c.redirect(`/?done=${encodeURIComponent(said)}`, 303);
  });
  if (opts.companyAdmin) {
    mountCompanies(app, actions, {
      admin: opts.companyAdmin,
      bearer: { warehouse: wh, envToken: opts.pushToken },
      log: opts.log,
      viewer,
      actor,
      resync: opts.actions?.resyncStream,
      known: (company) => companies().includes(company),
      personalData: { warehouse: wh, data: personalData },
    });
  }
  app.route('/actions', actions);
  app.route('/api/audit', auditApi({ warehouse: wh, envToken: opts.pushToken }));

  if (opts.queues) {
    // bull-board answers its own faults with their message: the caller gets the generic answer instead.
    app.use('/queues/*', async (c, next) => {
      await next();
      if (c.res.status >= 500)
        c.res = internalError(c, opts.log, {
          status: c.res.status,
          answer: (await c.res.clone().text()).slice(0, 2000),
        });
    });
    app.use('/queues', jobsShown(records, viewer));
    app.use('/queues/*', jobsShown(records, viewer));
    app.use('/queues/*', guardActions(canSignIn));
    app.use('/queues/*', queueActionsAudited(wh, actor));
    app.route('/queues', queueBoard(opts.queues, '/queues', !canSignIn()));
  } else {
    app.get('/queues', async (c) => c.html(inProcessPage(await recentRuns(wh), viewer(c))));
  }

  for (const mounted of opts.apps ?? []) app.route(mounted.path, mounted.app);
  return app;
}

/**
 * Record contents (rejects' payloads: names, e-mail addresses, dates of birth) need an operator or an admin signed
 * in when sign-in is possible; without it they show only to a server on loopback, which nobody else can reach.
 */
function recordView(
  canSignIn: () => boolean,
  viewer: (c: Context) => Viewer,
  host: string,
): (c: Context) => RecordView {
  const loopback = isLoopback(host);
  return (c) => {
    if (canSignIn()) {
      const v = viewer(c);
      if (holds(v, 'operator')) return { shown: true };
      const why = v.signedIn
        ? 'Raw payloads hold personal data: a viewer does not see them. Reasons and counts show to everyone.'
        : 'Raw payloads hold personal data: sign in to see them. Reasons and counts show to everyone.';
      return { shown: false, why };
    }
    if (loopback) return { shown: true };
    return {
      shown: false,
      why: `Raw payloads hold personal data and are hidden: this server listens on ${host}, beyond this machine, and no sign-in is set up (WFS_DASHBOARD_TOKEN or WFS_OIDC_ISSUER). Set one and sign in to see them. Reasons and counts show to everyone.`,
    };
  };
}

/**
 * bull-board shows each job's data and failure (push jobs carry entity keys such as employee numbers, failures
 * quote the service's messages about a record): the same rule as record contents.
 */
function jobsShown(records: (c: Context) => RecordView, viewer: (c: Context) => Viewer): MiddlewareHandler {
  return async (c, next) => {
    if (records(c).shown) return next();
    const why =
      "Queued jobs show entity keys and the service's messages about records: sign in to see them (or, without WFS_DASHBOARD_TOKEN, reach this server on loopback).";
    if (c.req.path.startsWith('/queues/api/')) return c.json({ error: `sign-in: ${why}` }, 403);
    return c.html(signInPage(viewer(c), why), 403);
  };
}

/** Acting on queued jobs (retry, clean, promote) is a change: audited with the method and path bull-board took. */
function queueActionsAudited(wh: Warehouse, actor: (c: Context) => Actor): MiddlewareHandler {
  return async (c, next) => {
    if (c.req.method === 'GET' || c.req.method === 'HEAD') return next();
    const target = `${c.req.method} ${c.req.path}`.slice(0, 300);
    await audited(wh, actor(c), 'queues', { target }, async (note) => {
      await next();
      if (c.res.status >= 400) note.refused(`answered ${c.res.status}`);
    });
  };
}

export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** An unexpected fault: the detail (a Postgres or library message) stays in the log, the caller gets an id to quote. */
function internalError(c: Context, log: Logger, detail: Record<string, unknown>): Response {
  const requestId = randomUUID();
  log.error({ ...detail, requestId, method: c.req.method, path: c.req.path }, 'ops request failed');
  return c.json({ error: 'internal error: the server log has the detail under this request id', requestId }, 500, {
    'x-request-id': requestId,
  });
}

const CONTROL = /[\u0000-\u001f\u007f]/;

/**
 * No route takes control characters in its path or query; bull-board, which reads its own, breaks on a NUL (it
 * separates its messages' parts with one). Refused up front, naming the parameter.
 */
const plainText: MiddlewareHandler = async (c, next) => {
  let path = c.req.path;
  try {
    path = decodeURIComponent(path);
  } catch {
    return c.json({ error: 'path: not valid percent-encoded UTF-8' }, 400);
  }
  if (CONTROL.test(path)) return c.json({ error: 'path: control characters are not allowed' }, 400);
  for (const [name, values] of Object.entries(c.req.queries())) {
    if (CONTROL.test(name) || values.some((v) => CONTROL.test(v)))
      return c.json({ error: `${name.replace(CONTROL, '?').slice(0, 64)}: control characters are not allowed` }, 400);
  }
  return next();
};

async function recentRuns(wh: Warehouse, limit = 100): Promise<InProcessRun[]> {
  return wh.sql<InProcessRun[]>`
    select company_key as company, stream, started_at as "startedAt", finished_at as "finishedAt", outcome,
      rows::int as rows, requests::int as requests, error
    from ${wh.sql(wh.schema)}.sync_runs order by (finished_at is null) desc, started_at desc limit ${limit}`;
}

/** A company's requests per day over the last 30 days, drawn. */
async function companyUsage(wh: Warehouse, company: string): Promise<string> {
  const today = new Date().toISOString().slice(0, 10);
  const since = new Date(Date.now() - 29 * 86_400_000).toISOString().slice(0, 10);
  return usageChart(company, await readUsage(wh, { company, since }), since, today);
}

/** Serves a hono app on host:port (0 for a free port). */
export async function listen(app: Hono, port: number, host: string = DEFAULTS.httpHost): Promise<OpsServer> {
  let server: ServerType | undefined;
  const info = await new Promise<{ port: number }>((resolve, reject) => {
    server = serve({ fetch: app.fetch, port, hostname: host }, resolve);
    server.once('error', reject);
  });
  const shown = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  return {
    url: `http://${shown}:${info.port}`,
    app,
    close: () =>
      new Promise<void>((resolve) => {
        const s = server as ServerType & { closeAllConnections?: () => void };
        s.close(() => resolve());
        s.closeAllConnections?.();
      }),
  };
}

export async function startOpsServer(opts: OpsServerOptions): Promise<OpsServer> {
  return listen(createOpsApp(opts), opts.port, opts.host);
}

/** A worker's own HTTP side: /metrics, /health and /ready, nothing that reads the warehouse's tables. */
export function createMetricsApp(opts: { metrics: Metrics; warehouse: Warehouse; redis?: Redis }): Hono {
  const app = new Hono();
  app.get('/health', (c) => c.json({ ok: true }));
  app.get('/ready', async (c) => {
    const r = await readiness(opts.warehouse, opts.redis);
    return c.json(r, r.ready ? 200 : 503);
  });
  app.get('/metrics', async (c) =>
    c.body(await opts.metrics.render(), 200, { 'content-type': opts.metrics.contentType }),
  );
  return app;
}
