import type { Context, Hono } from 'hono';
import type { RateLimit } from '../config.ts';
import type { ScheduleOptions } from '../queue/schedules.ts';
import { personalData } from '../resources/index.ts';
import { listAudit } from '../warehouse/audit.ts';
import type { Warehouse } from '../warehouse/connection.ts';
import { listEvents } from '../warehouse/events.ts';
import { listNewFields, newFieldModes } from '../warehouse/personal-data/new-fields.ts';
import { listResyncs } from '../warehouse/resyncs.ts';
import { listSchemaChanges } from '../warehouse/schema-changes.ts';
import { readUsage } from '../warehouse/usage.ts';
import { statusCharts } from './charts.ts';
import type { CompanyAdmin } from './company-admin.ts';
import { companyPage } from './company-page.ts';
import type { OpsActions } from './dashboard-actions.ts';
import { nameParam } from './input.ts';
import type { LiveFigures } from './live.ts';
import { newFieldsSection } from './new-fields-routes.ts';
import { filterCompanies, readOverview } from './overview.ts';
import { overviewPage } from './overview-page.ts';
import { rejectsPage, type RecordView, type Viewer } from './page.ts';
import { CompanyPageQuery, OverviewQuery, RejectsQuery, StatusQuery } from './page-queries.ts';
import { readQuery } from '../push/http-query.ts';
import { readPushModels, readPushSummary, readRejects, readRetryablePushes, readStatus } from './status.ts';
import { usageChart } from './usage-chart.ts';

/** Companies on one page of the overview: a thousand stay well under 300 KB. */
const OVERVIEW_PAGE = 1000;
/** The newest schema changes the overview lists; each company's page lists all of its own. */
const OVERVIEW_SCHEMA_CHANGES = 50;
/** Companies on one page of /status, by default and at most. */
const STATUS_PAGE = 50;
const STATUS_PAGE_MAX = 500;
const TIMELINE_PAGE = 50;
const REJECTS_PAGE = 50;

/** What the pages read: the warehouse, the live figures, and who is looking. */
export interface PageRouteOptions {
  warehouse: Warehouse;
  live: LiveFigures;
  schedule: ScheduleOptions;
  budget?: (company: string) => RateLimit | undefined;
  actions?: OpsActions;
  companyAdmin?: CompanyAdmin;
  scheduleDelay?: () => Promise<number | null>;
  extra?: () => Promise<Record<string, unknown>>;
  companies: () => readonly string[];
  viewer: (c: Context) => Viewer;
  records: (c: Context) => RecordView;
}

/** `/status` (JSON), the overview (`/`), each company's page and the rejects page. */
export function mountPages(app: Hono, o: PageRouteOptions): void {
  mountStatus(app, o);
  mountOverview(app, o);
  mountCompanyPage(app, o);
  mountRejects(app, o);
}

const overviewOf = (o: PageRouteOptions) =>
  readOverview(o.warehouse, { companies: o.companies(), schedule: o.schedule, budget: o.budget });

// Pages of companies in key order: the cursor is the last key of the page before.
function mountStatus(app: Hono, o: PageRouteOptions): void {
  app.get('/status', async (c) => {
    const q = readQuery(c, StatusQuery);
    if (!q.ok) return q.res;
    const { company, state, cursor, limit } = q.query;
    const size = Math.min(limit ?? STATUS_PAGE, STATUS_PAGE_MAX);
    const overview = await overviewOf(o);
    // ?company= names one company exactly (the overview's ?q= searches part of a key).
    const matched = filterCompanies(overview.companies, { state })
      .filter((s) => (!company || s.company === company) && (!cursor || s.company > cursor))
      .sort((a, b) => (a.company < b.company ? -1 : 1));
    const page = matched.slice(0, size);
    const keys = page.map((s) => s.company);
    const status = await readStatus(o.warehouse, { companies: o.companies(), only: keys, schedule: o.schedule });
    const shown = new Set(keys);
    return c.json({
      counts: overview.counts,
      total: overview.total,
      companies: page,
      ...status,
      keys: o.live.keys().filter((k) => shown.has(k.company)),
      nextCursor: matched.length > size ? keys.at(-1) : null,
      ...(await o.extra?.()),
    });
  });
}

function mountOverview(app: Hono, o: PageRouteOptions): void {
  const wh = o.warehouse;
  app.get('/', async (c) => {
    const v = o.viewer(c);
    const q = readQuery(c, OverviewQuery);
    if (!q.ok) return q.res;
    const filter = { search: q.query.q, state: q.query.state };
    const overview = await overviewOf(o);
    const matched = filterCompanies(overview.companies, filter);
    const page = q.query.page ?? 1;
    const retryable = o.actions?.retryPush ? await readRetryablePushes(wh) : undefined;
    const models = o.actions?.pushModel ? await readPushModels(wh) : undefined;
    return c.html(
      overviewPage({
        overview,
        shown: matched.slice((page - 1) * OVERVIEW_PAGE, page * OVERVIEW_PAGE),
        matched: matched.length,
        filter,
        page,
        pageSize: OVERVIEW_PAGE,
        scheduleDelaySeconds: o.scheduleDelay ? await o.scheduleDelay() : undefined,
        push: await readPushSummary(wh),
        retryable,
        viewer: v,
        records: o.records(c),
        models,
        schemaChanges: await listSchemaChanges(wh, { limit: OVERVIEW_SCHEMA_CHANGES }),
        flash: c.req.query('done'),
        now: Date.now(),
      }),
    );
  });
}

function mountCompanyPage(app: Hono, o: PageRouteOptions): void {
  const wh = o.warehouse;
  app.get('/companies/:key', async (c) => {
    const key = nameParam('key', c.req.param('key'));
    if (!key.ok || !key.value) return c.json({ error: key.ok ? 'key: required' : key.error }, 400);
    const company = key.value;
    const q = readQuery(c, CompanyPageQuery);
    if (!q.ok) return q.res;
    const status = await readStatus(wh, { companies: o.companies(), only: [company], schedule: o.schedule });
    if (!o.companies().includes(company) && status.streams.length === 0)
      return c.json({ error: `key: company "${company}" is not known` }, 404);
    const events = await listEvents(wh, { companyKey: company, beforeId: q.query.before, limit: TIMELINE_PAGE });
    return c.html(
      companyPage({
        company,
        status,
        keys: o.live.keys().filter((k) => k.company === company),
        viewer: o.viewer(c),
        canRun: !!o.actions?.runStream,
        canResync: !!o.actions?.resyncStream,
        canSwitch: !!o.companyAdmin,
        charts: await statusCharts(wh, { companies: [company], live: o.live, budget: o.budget }),
        usage: await companyUsage(wh, company),
        events,
        schemaChanges: await listSchemaChanges(wh, { companyKey: company }),
        newFields: newFieldsSection(
          company,
          await listNewFields(wh, personalData, company),
          (await newFieldModes(wh))[company] ?? 'keep',
          o.viewer(c),
          !!o.companyAdmin,
        ),
        resyncs: await listResyncs(wh, company),
        olderThan: events.length === TIMELINE_PAGE ? events.at(-1)!.id : undefined,
        audit: await listAudit(wh, { company, limit: TIMELINE_PAGE }),
        flash: c.req.query('done'),
        now: Date.now(),
      }),
    );
  });
}

function mountRejects(app: Hono, o: PageRouteOptions): void {
  app.get('/rejects', async (c) => {
    const q = readQuery(c, RejectsQuery);
    if (!q.ok) return q.res;
    const filter = { company: q.query.company, stream: q.query.stream };
    const rejects = await readRejects(o.warehouse, { ...filter, before: q.query.before, limit: REJECTS_PAGE });
    const older = rejects.length === REJECTS_PAGE ? rejects.at(-1)!.id : undefined;
    return c.html(rejectsPage(rejects, filter, o.viewer(c), o.records(c), older));
  });
}

/** A company's requests per day over the last 30 days, drawn. */
async function companyUsage(wh: Warehouse, company: string): Promise<string> {
  const today = new Date().toISOString().slice(0, 10);
  const since = new Date(Date.now() - 29 * 86_400_000).toISOString().slice(0, 10);
  return usageChart(company, await readUsage(wh, { company, since }), since, today);
}
