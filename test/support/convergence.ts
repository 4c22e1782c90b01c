import type { SandboxData } from '../../src/sandbox/service.ts';
import { endpoints, type EndpointName } from '../../src/source/endpoints.ts';
import { streams, partitionsOf, type StreamDef } from '../../src/sync/streams.ts';
import type { StreamOutcome } from '../../src/sync/runner.ts';
import type { Warehouse } from '../../src/warehouse/connection.ts';
import { mapItem, targets } from '../../src/warehouse/index.ts';
import { keyText } from '../../src/warehouse/rows.ts';

export interface Divergence {
  missing: string[];
  extra: string[];
  stale: string[];
  expected: number;
}

/**
 * Compares every synced table with the sandbox's truth, row for row: the live rows (not `_deleted_at`) must be
 * exactly the records the service holds, each with the content the service holds now (children included).
 */
export async function divergence(wh: Warehouse, data: SandboxData, companyKey: string): Promise<Record<string, Divergence>> {
  const out: Record<string, Divergence> = {};
  for (const stream of streams) {
    const target = targets[stream.target as keyof typeof targets];
    const expected = new Map<string, string>();
    for (const p of partitionsOf(stream, { formIds: data.formIds(), runTypeIds: data.runTypeIds() })) {
      const records = data.truth(stream.endpoint.name as EndpointName, p.query as never);
      const envelope = envelopeOf(stream.endpoint.name, p.query, data);
      for (const record of records) {
        const item = endpoints[stream.endpoint.name as EndpointName].item.parse(record) as Record<string, unknown>;
        const mapped = mapItem(target, companyKey, item, envelope);
        if (!mapped.deleted) expected.set(mapped.keyText, String(mapped.row._hash));
      }
    }
    const rows = await wh.sql.unsafe(
      `select * from "${wh.schema}"."${target.table}" where company_key = $1 and _deleted_at is null`,
      [companyKey],
    );
    const actual = new Map(rows.map((r) => [keyText(r, target.key), String(r._hash)]));
    const d: Divergence = { missing: [], extra: [], stale: [], expected: expected.size };
    for (const [k, h] of expected) {
      if (!actual.has(k)) d.missing.push(k);
      else if (actual.get(k) !== h) d.stale.push(k);
    }
    for (const k of actual.keys()) if (!expected.has(k)) d.extra.push(k);
    out[stream.name] = d;
  }
  return out;
}

/** The envelope fields a partitioned list adds to its items (FormId; RunLogTypeId and RunLogFormType). */
function envelopeOf(endpoint: string, query: Record<string, unknown>, data: SandboxData): Record<string, unknown> | undefined {
  if (endpoint !== 'formResponses' && endpoint !== 'runLogFormResponses') return undefined;
  const range = { StartDate: new Date('2000-01-01T00:00:00Z'), EndDate: new Date('2100-01-01T00:00:00Z') };
  const page = data.read(endpoint, { ...query, ...range } as never, { offset: 0, limit: 1 });
  if (!page.ok) throw new Error(`sandbox refused ${endpoint} ${JSON.stringify(query)}: ${page.refusal.message}`);
  return page.value.extras;
}

/** Only the streams that diverge, with at most a few keys each, for a readable failure. */
export function summarizeDivergence(d: Record<string, Divergence>): Record<string, unknown> {
  const bad: Record<string, unknown> = {};
  for (const [stream, x] of Object.entries(d)) {
    if (x.missing.length || x.extra.length || x.stale.length) {
      bad[stream] = {
        expected: x.expected,
        missing: x.missing.length,
        extra: x.extra.length,
        stale: x.stale.length,
        examples: [...x.missing.slice(0, 3), ...x.extra.slice(0, 3), ...x.stale.slice(0, 3)],
      };
    }
  }
  return bad;
}

/** The longest periodic re-read of a stream: changes it alone brings may wait that long. */
export function boundHours(s: StreamDef): number {
  const rereads = 'rereads' in s.strategy ? (s.strategy.rereads ?? []) : [];
  return Math.max(0, ...rereads.map((r) => r.everyHours));
}

/** Streams whose bound is met after this step: bound within a step, or their widest re-read ran in it. */
export function dueForComparison(stepHours: number, outcomes: readonly StreamOutcome[]): Set<string> {
  const out = new Set<string>();
  for (const s of streams) {
    const bound = boundHours(s);
    const widest = 'rereads' in s.strategy ? (s.strategy.rereads ?? []).find((r) => r.everyHours === bound) : undefined;
    const ran = outcomes.find((o) => o.stream === s.name)?.rereads.includes(widest?.name ?? '');
    if (bound <= stepHours || ran) out.add(s.name);
  }
  return out;
}


/** The divergence of the streams whose bound is met after a sync that followed `hours` of changes. */
export function withinBounds(d: Record<string, Divergence>, hours: number, outcomes: readonly StreamOutcome[]): Record<string, Divergence> {
  const due = dueForComparison(hours, outcomes);
  return Object.fromEntries(Object.entries(d).filter(([name]) => due.has(name)));
}
