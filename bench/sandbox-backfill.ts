import { Pool } from 'undici';
import { API_VERSION, AUTH_HEADER, PAGE_LIMIT_MAX } from '../src/source/endpoints.ts';
import { endpoints, streams, type EndpointName } from '../src/resources/index.ts';
import type { Target } from '../src/warehouse/targets.ts';

/**
 * The load of a first sync against the sandbox: every endpoint read once, whole, page by page, the way a backfill
 * walks it (date windows for the windowed lists, each form and run type). Run in its own process by bench/sandbox.ts.
 */

export interface BackfillJob {
  url: string;
  apiKey: string;
  connections: number;
}

export interface BackfillResult {
  requests: number;
  failures: number;
  records: number;
  bytes: number;
  seconds: number;
  byEndpoint: Record<string, { requests: number; records: number }>;
}

const DAY = 86_400_000;
export type Query = Record<string, string | number | boolean>;

/** The path of one page of a read: an envelope list's page at `offset`; any other list whole. */
export function pagePath(name: EndpointName, query: Query, offset: number): string {
  const e = endpoints[name];
  const q = new URLSearchParams({ 'api-version': API_VERSION });
  for (const [k, v] of Object.entries(query)) q.set(k, String(v));
  if (e.response.kind === 'envelope') {
    q.set('Offset', String(offset));
    q.set('Limit', String(PAGE_LIMIT_MAX));
  }
  return `${e.path}?${q}`;
}

/** The warehouse target of the stream that reads the endpoint `name`. */
export function targetOfEndpoint(name: EndpointName): Target {
  return streams.find((s) => s.endpoint.name === name)!.target;
}

/** Windows of `days` days from `from` to `to` (instants), as `[start, end]` ISO texts. */
function windows(from: number, to: number, days: number): [string, string][] {
  const out: [string, string][] = [];
  for (let t = from; t < to; t += days * DAY)
    out.push([new Date(t).toISOString(), new Date(Math.min(t + days * DAY - 1000, to)).toISOString()]);
  return out;
}

export async function reads(info: {
  now: string;
  formIds: number[];
  runTypeIds: number[];
}): Promise<[EndpointName, Query][]> {
  const now = Date.parse(info.now);
  const from = now - 560 * DAY;
  const to = now + 120 * DAY;
  const out: [EndpointName, Query][] = [];
  for (const name of [
    'certifications',
    'workStatuses',
    'departments',
    'workShifts',
    'jobTitles',
    'locales',
    'schedules',
    'runLogForms',
    'individuals',
    'supervisors',
  ] as const)
    out.push([name, {}]);
  out.push(
    ['individualCertifications', { IncludeDeleted: true }],
    ['pendingCertifications', {}],
    ['requiredCertificationStatus', {}],
  );
  for (const [s, e] of windows(from, to, 7))
    out.push(['shiftAssignments', { StartDate: s, EndDate: e }], ['assignmentChanges', { StartDate: s, EndDate: e }]);
  for (const [s, e] of windows(from, to, 30)) {
    out.push(['timeOffRequests', { StartDateTime: s, EndDateTime: new Date(Date.parse(e) + 30 * DAY).toISOString() }]);
    out.push(['individualCourses', { startDate: s.slice(0, 10), endDate: e.slice(0, 10), statusOption: 0 }]);
    out.push(['formAudit', { StartDate: s, EndDate: e }]);
  }
  const range = {
    StartDate: new Date(from).toISOString().slice(0, 10),
    EndDate: new Date(to).toISOString().slice(0, 10),
  };
  for (const FormId of info.formIds) out.push(['formResponses', { FormId, ...range }]);
  for (const RunTypeId of info.runTypeIds) {
    for (const FormType of ['Debrief', 'Utilization', 'ChartReview'])
      out.push([
        'runLogFormResponses',
        { RunTypeId, FormType, StartDate: new Date(from).toISOString(), EndDate: new Date(to).toISOString() },
      ]);
  }
  return out;
}

export async function backfill(job: BackfillJob): Promise<BackfillResult> {
  const pool = new Pool(job.url, { connections: job.connections, pipelining: 1 });
  const headers = { [AUTH_HEADER]: job.apiKey };
  const info = (await (await pool.request({ method: 'GET', path: '/_sandbox/info' })).body.json()) as {
    now: string;
    formIds: number[];
    runTypeIds: number[];
  };
  const todo = await reads(info);
  const result: BackfillResult = { requests: 0, failures: 0, records: 0, bytes: 0, seconds: 0, byEndpoint: {} };
  const started = performance.now();
  const walk = async ([name, query]: [EndpointName, Query]) => {
    const stats = (result.byEndpoint[name] ??= { requests: 0, records: 0 });
    for (let offset = 0; ; offset += PAGE_LIMIT_MAX) {
      const res = await pool.request({ method: 'GET', path: pagePath(name, query, offset), headers });
      const text = await res.body.text();
      result.requests += 1;
      stats.requests += 1;
      result.bytes += Buffer.byteLength(text);
      if (res.statusCode !== 200) {
        result.failures += 1;
        return;
      }
      const body = JSON.parse(text) as { Data?: unknown[]; HasMoreResults?: boolean } | unknown[];
      const items = Array.isArray(body) ? body : (body.Data ?? []);
      result.records += items.length;
      stats.records += items.length;
      if (Array.isArray(body) || !body.HasMoreResults) return;
    }
  };
  let next = 0;
  await Promise.all(
    Array.from({ length: job.connections }, async () => {
      while (next < todo.length) await walk(todo[next++]!);
    }),
  );
  result.seconds = (performance.now() - started) / 1000;
  await pool.close();
  return result;
}
