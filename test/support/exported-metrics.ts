import { collectDefaultMetrics, Registry } from 'prom-client';
import { Metrics, PREFIX, type QueueCounts } from '../../src/ops/metrics.ts';

/**
 * The /metrics text of a process that has seen one event of every kind, with a queue and the push outbox to
 * count, so that every family the server can export has samples.
 */
export async function renderedMetrics(): Promise<string> {
  const queue: QueueCounts = {
    name: 'sync',
    getJobCounts: async () => ({ waiting: 2, active: 1, delayed: 0, failed: 1, completed: 9 }),
  };
  const metrics = new Metrics({ queues: () => [queue], outbox: async () => ({ queued: 3, applied: 10, in_doubt: 1 }) });
  const o = metrics.observer;
  o.request!({
    company: 'acme',
    key: 'k1',
    endpoint: 'individuals',
    method: 'GET',
    lane: 'backfill',
    status: 200,
    outcome: 'ok',
    durationMs: 120,
    attempt: 0,
  });
  o.request!({
    company: 'acme',
    key: 'k1',
    endpoint: 'individuals',
    method: 'GET',
    lane: 'backfill',
    status: 429,
    outcome: 'rate_limited',
    durationMs: 30,
    attempt: 1,
  });
  o.limiterWait!({ company: 'acme', key: 'k1', lane: 'backfill', waitMs: 250 });
  o.budget!({ company: 'acme', key: 'k1', limit: 100, remaining: 40 });
  o.page!({ company: 'acme', stream: 'individuals', partition: 'all', rows: 200, rejects: 1, deleted: 2 });
  o.stream!({
    company: 'acme',
    stream: 'individuals',
    outcome: 'ok',
    durationMs: 5000,
    rows: 200,
    rejects: 1,
    deleted: 2,
    requests: 2,
    at: Date.now(),
  });
  o.push!({ company: 'acme', kind: 'individual', outcome: 'applied', latencyMs: 900 });
  o.schemaChange!({ company: 'acme', stream: 'individuals', kind: 'appeared', path: 'BadgeNumber' });
  return metrics.render();
}

/** Each series in a Prometheus text exposition (a histogram's _bucket, _sum, _count apart) with its label names. */
export function seriesLabels(text: string): Map<string, Set<string>> {
  const series = new Map<string, Set<string>>();
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?\s/.exec(line);
    if (!m) continue;
    const labels = series.get(m[1]!) ?? new Set<string>();
    for (const l of (m[2] ?? '').matchAll(/(\w+)="/g)) labels.add(l[1]!);
    series.set(m[1]!, labels);
  }
  return series;
}

/** The families a text exposition declares (`# TYPE name kind`), with their kind. */
export function families(text: string): { name: string; type: string }[] {
  return [...text.matchAll(/^# TYPE (\S+) (\S+)/gm)].map((m) => ({ name: m[1]!, type: m[2]! }));
}

/** The Node runtime's families (prom-client's defaults), which no event feeds: some have samples only after a GC. */
export async function runtimeFamilies(): Promise<Set<string>> {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: PREFIX });
  return new Set((await registry.getMetricsAsJSON()).map((m) => m.name));
}
