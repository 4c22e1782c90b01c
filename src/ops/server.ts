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
import type { ScheduleOptions } from '../queue/schedules.ts';
import type { LiveFigures } from './live.ts';
import type { Metrics } from './metrics.ts';
import { holds, inProcessPage, signInPage, type InProcessRun, type RecordView, type Viewer } from './page.ts';
import type { CompanyAdmin } from './company-admin.ts';
import { mountCompanies } from './companies-routes.ts';
import { auditApi } from './audit-routes.ts';
import { personalData } from '../resources/index.ts';
import { queueBoard } from './queues.ts';
import { readiness } from './ready.ts';
import { audited, type Actor } from '../warehouse/audit.ts';
import { mountDashboardActions, type OpsActions } from './dashboard-actions.ts';
import { mountPages } from './page-routes.ts';

/** The dashboard's forms hold a token or a company and stream: nothing near this size. */
const FORM_MAX_BYTES = 16 * 1024;

/** An HTTP app another module serves under a path of this server (the push API under /push). */
export interface MountedApp {
  path: string;
  app: Hono<Env, Schema, string>;
}

export { PUSH_MODEL_VERBS, type OpsActions, type PushModelVerb } from './dashboard-actions.ts';

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
  const who = operators(opts);
  guard(app, opts, who.auth);
  mountProbes(app, opts);
  mountPages(app, { ...opts, companies: who.companies, viewer: who.viewer, records: who.records });
  mountSignIn(app, opts, who);
  mountActions(app, opts, who);
  app.route('/api/audit', auditApi({ warehouse: opts.warehouse, envToken: opts.pushToken }));
  mountQueues(app, opts, who);
  for (const mounted of opts.apps ?? []) app.route(mounted.path, mounted.app);
  return app;
}

/** Who is looking and what they may see: the sign-in, the viewer, record contents, the companies known. */
interface Operators {
  auth: DashboardAuth;
  oidc: OidcSignIn | undefined;
  canSignIn: () => boolean;
  viewer: (c: Context) => Viewer;
  /** Who a signed-in dashboard request acts as (the actions' guard lets no one else through). */
  actor: (c: Context) => Actor;
  records: (c: Context) => RecordView;
  companies: () => readonly string[];
}

function operators(opts: OpsServerOptions): Operators {
  const wh = opts.warehouse;
  // With an identity provider, everyone signs in by name: the shared dashboard token no longer does.
  const auth = new DashboardAuth(wh, opts.oidc ? undefined : opts.dashboardToken, opts.sessions);
  const oidc = opts.oidc ? new OidcSignIn(opts.oidc, wh) : undefined;
  const canSignIn = () => auth.tokenSignIn || !!oidc;
  const viewer = (c: Context): Viewer => {
    const who = operatorOf(c);
    return { signedIn: !!who, canSignIn: canSignIn(), actor: who?.actor, role: who?.role, oidc: !!oidc };
  };
  const actor = (c: Context): Actor => operatorOf(c)?.actor ?? 'unknown';
  const records = recordView(canSignIn, viewer, opts.host ?? DEFAULTS.httpHost);
  const companies = () => (typeof opts.companies === 'function' ? opts.companies() : opts.companies);
  return { auth, oidc, canSignIn, viewer, actor, records, companies };
}

/** Faults, caching and framing headers, control characters, the session, and the forms' body limit. */
function guard(app: Hono, opts: OpsServerOptions, auth: DashboardAuth): void {
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
}

/** /health, /ready and /metrics, as a worker's own HTTP side has them. */
function mountProbes(app: Hono, opts: { metrics: Metrics; warehouse: Warehouse; redis?: Redis }): void {
  app.get('/health', (c) => c.json({ ok: true }));
  app.get('/ready', async (c) => {
    const r = await readiness(opts.warehouse, opts.redis);
    return c.json(r, r.ready ? 200 : 503);
  });
  app.get('/metrics', async (c) =>
    c.body(await opts.metrics.render(), 200, { 'content-type': opts.metrics.contentType }),
  );
}

function mountSignIn(app: Hono, opts: OpsServerOptions, who: Operators): void {
  const signIn = { auth: who.auth, warehouse: opts.warehouse, log: opts.log, viewer: who.viewer };
  if (who.oidc) mountOidcSignIn(app, { ...signIn, oidc: who.oidc });
  else mountTokenSignIn(app, signIn);
  mountSignOut(app, signIn);
}

/** Everything that changes something from the dashboard, under /actions behind the roles' guard. */
function mountActions(app: Hono, opts: OpsServerOptions, who: Operators): void {
  const wh = opts.warehouse;
  const actions = new Hono();
  actions.use('*', guardActions(who.canSignIn));
  mountDashboardActions(actions, { actions: opts.actions, log: opts.log, companies: who.companies, actor: who.actor });
  if (opts.companyAdmin) {
    mountCompanies(app, actions, {
      admin: opts.companyAdmin,
      bearer: { warehouse: wh, envToken: opts.pushToken },
      log: opts.log,
      viewer: who.viewer,
      actor: who.actor,
      resync: opts.actions?.resyncStream,
      known: (company) => who.companies().includes(company),
      personalData: { warehouse: wh, data: personalData },
    });
  }
  app.route('/actions', actions);
}

/** bull-board under /queues when jobs go through Redis; the recent runs otherwise. */
function mountQueues(app: Hono, opts: OpsServerOptions, who: Operators): void {
  const wh = opts.warehouse;
  if (!opts.queues) {
    app.get('/queues', async (c) => c.html(inProcessPage(await recentRuns(wh), who.viewer(c))));
    return;
  }
  // bull-board answers its own faults with their message: the caller gets the generic answer instead.
  app.use('/queues/*', async (c, next) => {
    await next();
    if (c.res.status >= 500)
      c.res = internalError(c, opts.log, {
        status: c.res.status,
        answer: (await c.res.clone().text()).slice(0, 2000),
      });
  });
  app.use('/queues', jobsShown(who.records, who.viewer));
  app.use('/queues/*', jobsShown(who.records, who.viewer));
  app.use('/queues/*', guardActions(who.canSignIn));
  app.use('/queues/*', queueActionsAudited(wh, who.actor));
  app.route('/queues', queueBoard(opts.queues, '/queues', !who.canSignIn()));
}

const noStore: MiddlewareHandler = async (c, next) => {
  await next();
  c.header('cache-control', 'no-store');
  // The dashboard's buttons act: no other site may frame them, and no answer is sniffed into markup.
  c.header('x-frame-options', 'DENY');
  c.header('x-content-type-options', 'nosniff');
};

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
  mountProbes(app, opts);
  return app;
}
