import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { families, renderedMetrics, runtimeFamilies, seriesLabels } from '../support/exported-metrics.ts';

/** ops/grafana/: the dashboard queries only series the server exports, by labels they carry, in valid PromQL. */

const DIR = fileURLToPath(new URL('../../ops/grafana/', import.meta.url));

interface Target {
  expr: string;
  refId: string;
  datasource: { type: string; uid: string };
}
interface Panel {
  id: number;
  type: string;
  title: string;
  gridPos: { x: number; y: number; w: number; h: number };
  targets?: Target[];
  panels?: Panel[];
}
interface Dashboard {
  uid: string;
  id?: number | null;
  title: string;
  panels: Panel[];
  templating: { list: { name: string; type: string; query: string | { query: string } }[] };
}

const dashboard = JSON.parse(readFileSync(join(DIR, 'workforce-sync.json'), 'utf8')) as Dashboard;
const panels = dashboard.panels.flatMap((p) => [p, ...(p.panels ?? [])]).filter((p) => p.type !== 'row');
const variables = dashboard.templating.list;
const variableQueries = variables
  .filter((v) => v.type === 'query')
  .map((v) => (typeof v.query === 'string' ? v.query : v.query.query));
const queries = [
  ...panels.flatMap((p) => (p.targets ?? []).map((t) => ({ where: p.title, expr: t.expr }))),
  ...variableQueries.map((q) => ({ where: 'variables', expr: q })),
];

const named = (expr: string) => [...new Set(expr.match(/\bwfsync_[a-z0-9_]+/g) ?? [])];
// Labels Prometheus adds to every series it scrapes, and a histogram's bucket bound.
const SCRAPE_LABELS = ['instance', 'job', 'le'];

/** Each series the server exports, with the label names its samples carry. */
let exported: Map<string, Set<string>>;

beforeAll(async () => {
  const text = await renderedMetrics();
  exported = seriesLabels(text);
  // Every family the events feed has samples here, so labels are checked against real series.
  const runtime = await runtimeFamilies();
  const empty = families(text).filter(
    (f) => !runtime.has(f.name) && ![f.name, `${f.name}_count`].some((s) => exported.has(s)),
  );
  expect(empty, 'families without a sample in the rendered /metrics').toEqual([]);
  // A runtime family without samples yet (GC durations before a GC) is still exported.
  for (const f of families(text)) {
    const names = f.type === 'histogram' ? ['_bucket', '_sum', '_count'].map((s) => f.name + s) : [f.name];
    for (const n of names) if (!exported.has(n)) exported.set(n, new Set());
  }
});

describe('ops/grafana/workforce-sync.json', () => {
  it('queries only series the server exports', () => {
    for (const p of panels) expect(p.targets?.length, p.title).toBeGreaterThan(0);
    for (const q of queries) {
      expect(named(q.expr), `${q.where}: ${q.expr}`).not.toEqual([]);
      for (const metric of named(q.expr)) expect([...exported.keys()], `${q.where}: ${metric}`).toContain(metric);
    }
  });

  it('selects and groups by labels those series carry', () => {
    for (const q of queries) {
      const carried = new Set([...named(q.expr).flatMap((m) => [...(exported.get(m) ?? [])]), ...SCRAPE_LABELS]);
      for (const [, metric, matchers] of q.expr.matchAll(/\b(wfsync_[a-z0-9_]+)\{([^}]*)\}/g)) {
        for (const [, label] of matchers!.matchAll(/(\w+)\s*(?:=~|!~|!=|=)/g))
          expect([...exported.get(metric!)!], `${q.where}: ${metric}{${label}}`).toContain(label);
      }
      for (const [, grouping] of q.expr.matchAll(/\bby\s*\(([^)]*)\)/g)) {
        for (const label of grouping!.split(',').map((l) => l.trim()))
          expect([...carried], `${q.where}: by (${label})`).toContain(label);
      }
    }
  });

  it('shows what an operator watches: budget, requests by status, freshness, rows, rejects, push outcomes and latency, queues', () => {
    const shown = (pattern: RegExp) => queries.some((q) => pattern.test(q.expr));
    expect(shown(/wfsync_budget_used_requests/)).toBe(true);
    expect(shown(/wfsync_budget_limit_requests/)).toBe(true);
    expect(shown(/by \(status_class\).*wfsync_requests_total/)).toBe(true);
    expect(shown(/time\(\) - .*wfsync_stream_last_success_timestamp_seconds/)).toBe(true);
    expect(shown(/wfsync_rows_written_total/)).toBe(true);
    expect(shown(/wfsync_rejects_total/)).toBe(true);
    expect(shown(/by \([^)]*outcome[^)]*\).*wfsync_push_changes_total/)).toBe(true);
    expect(shown(/histogram_quantile\(.*wfsync_push_latency_seconds_bucket/)).toBe(true);
    expect(shown(/by \([^)]*state[^)]*\).*wfsync_queue_jobs/)).toBe(true);
  });

  it('asks for a Prometheus data source, defines the variables it uses, and lays panels out without overlap', () => {
    expect(dashboard.uid).toBe('workforce-sync');
    expect(dashboard.id ?? null).toBeNull();
    expect(variables.find((v) => v.name === 'datasource')).toMatchObject({ type: 'datasource', query: 'prometheus' });
    for (const p of panels)
      for (const t of p.targets ?? [])
        expect(t.datasource, p.title).toEqual({ type: 'prometheus', uid: '${datasource}' });
    const defined = new Set(variables.map((v) => v.name));
    for (const q of queries)
      for (const [, v] of q.expr.matchAll(/\$(?!__)(\w+)/g)) expect([...defined], `${q.where}: $${v}`).toContain(v);
    expect(new Set(dashboard.panels.flatMap((p) => [p, ...(p.panels ?? [])]).map((p) => p.id)).size).toBe(
      panels.length + dashboard.panels.filter((p) => p.type === 'row').length,
    );
    const all = dashboard.panels;
    for (const [i, a] of all.entries()) {
      expect(a.gridPos.x + a.gridPos.w, a.title).toBeLessThanOrEqual(24);
      for (const b of all.slice(i + 1)) {
        const apart =
          a.gridPos.x + a.gridPos.w <= b.gridPos.x ||
          b.gridPos.x + b.gridPos.w <= a.gridPos.x ||
          a.gridPos.y + a.gridPos.h <= b.gridPos.y ||
          b.gridPos.y + b.gridPos.h <= a.gridPos.y;
        expect(apart, `${a.title} overlaps ${b.title}`).toBe(true);
      }
    }
  });

  it('is provisioned from files by ops/grafana/dashboards.yml', () => {
    const provisioning = parse(readFileSync(join(DIR, 'dashboards.yml'), 'utf8')) as {
      apiVersion: number;
      providers: { type: string; options: { path: string } }[];
    };
    expect(provisioning.apiVersion).toBe(1);
    expect(provisioning.providers).toEqual([
      expect.objectContaining({
        type: 'file',
        options: expect.objectContaining({ path: expect.stringMatching(/^\//) }),
      }),
    ]);
  });

  it('every query is valid PromQL for promtool (where promtool is installed)', () => {
    if (spawnSync('sh', ['-c', 'command -v promtool']).status !== 0) {
      // npm test's pretest (bin/test-tools.sh) installs Debian's prometheus package, which has promtool.
      expect(process.env.CI ?? '').toBe('');
      return;
    }
    // Grafana's variables as Prometheus would receive them.
    const promql = (expr: string) => expr.replaceAll('$__rate_interval', '2m').replace(/\$(\w+)/g, '.*');
    const rules = panels.flatMap((p) =>
      (p.targets ?? []).map((t) => ({ record: `dashboard:panel${p.id}:${t.refId}`, expr: promql(t.expr) })),
    );
    const dir = mkdtempSync(join(tmpdir(), 'wfsync-grafana-'));
    try {
      const file = join(dir, 'queries.yml');
      writeFileSync(file, stringify({ groups: [{ name: 'dashboard', rules }] }));
      const out = execFileSync('promtool', ['check', 'rules', file], { encoding: 'utf8' });
      expect(out).toMatch(new RegExp(`SUCCESS: ${rules.length} rules found`));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
