import type { SandboxData } from '../../src/sandbox/service.ts';
import { endpoints, streams, type EndpointName } from '../../src/resources/index.ts';
import { partitionsOf } from '../../src/sync/partitions.ts';
import type { StreamDef } from '../../src/resources/stream.ts';
import type { StreamOutcome } from '../../src/sync/runner.ts';
import type { Warehouse } from '../../src/warehouse/connection.ts';
import { mapItem } from '../../src/warehouse/fingerprint.ts';
import { keyText } from '../../src/warehouse/record-keys.ts';

export interface Divergence {
  missing: string[];
  extra: string[];
  stale: string[];
  expected: number;
}

/** The rows of a table a comparison covers: those whose start (and end) lie in [from, to]. */
export interface Span {
  startColumn: string;
  endColumn?: string;
  from: Date;
  to: Date;
}

function inSpan(row: Record<string, unknown>, span: Span | undefined): boolean {
  if (!span) return true;
  const at = (column: string) => new Date(row[column] as string | Date).getTime();
  if (at(span.startColumn) < span.from.getTime() || at(span.startColumn) > span.to.getTime()) return false;
  return !span.endColumn || at(span.endColumn) <= span.to.getTime();
}

/**
 * Compares every synced table with the sandbox's truth, row for row: the live rows (not `_deleted_at`) must be
 * exactly the records the service holds, each with the content the service holds now (children included).
 * A stream given a span is compared on the rows (truth's and warehouse's) in that span only.
 */
export async function divergence(
  wh: Warehouse,
  data: SandboxData,
  companyKey: string,
  spans: Record<string, Span> = {},
): Promise<Record<string, Divergence>> {
  const out: Record<string, Divergence> = {};
  for (const stream of streams) {
    const span = spans[stream.name];
    const target = stream.target;
    const expected = new Map<string, string>();
    for (const p of partitionsOf(stream, { formIds: data.formIds(), runTypeIds: data.runTypeIds() })) {
      const records = data.truth(stream.endpoint.name as EndpointName, p.query as never);
      const envelope = envelopeOf(stream.endpoint.name, p.query, data);
      for (const record of records) {
        const item = endpoints[stream.endpoint.name as EndpointName].item.parse(record) as Record<string, unknown>;
        const mapped = mapItem(target, companyKey, item, envelope);
        if (!mapped.deleted && inSpan(mapped.row, span)) expected.set(mapped.keyText, String(mapped.row._hash));
      }
    }
    const rows = await wh.sql.unsafe(
      `select * from "${wh.schema}"."${target.table}" where company_key = $1 and _deleted_at is null`,
      [companyKey],
    );
    const actual = new Map(rows.filter((r) => inSpan(r, span)).map((r) => [keyText(r, target.key), String(r._hash)]));
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
function envelopeOf(
  endpoint: string,
  query: Record<string, unknown>,
  data: SandboxData,
): Record<string, unknown> | undefined {
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

/**
 * Streams not yet due whose shorter re-read, with a span, ran within the step: their rows in that span (around
 * the service's `now`) are within their bound.
 */
export function spansWithinBound(
  stepHours: number,
  outcomes: readonly StreamOutcome[],
  now: Date,
): Record<string, Span> {
  const due = dueForComparison(stepHours, outcomes);
  const out: Record<string, Span> = {};
  for (const s of streams) {
    if (due.has(s.name)) continue;
    const st = s.strategy;
    const rereads = 'rereads' in st ? (st.rereads ?? []) : [];
    const r = rereads
      .filter((x) => x.span && x.everyHours <= stepHours)
      .sort((a, b) => b.span!.backDays - a.span!.backDays)[0];
    if (!r?.span) continue;
    const columns =
      st.kind === 'change-driven'
        ? { startColumn: st.startColumn }
        : 'deleteMissing' in st && st.deleteMissing
          ? st.deleteMissing
          : undefined;
    if (!columns) continue;
    // The sync's span starts at its own reading of the service's clock, a little after `now`: rows within an hour
    // of its start are left to the weekly re-read.
    const from = now.getTime() - r.span.backDays * 86_400_000 + 3_600_000;
    out[s.name] = { ...columns, from: new Date(from), to: new Date(now.getTime() + r.span.forwardDays * 86_400_000) };
  }
  return out;
}

/** The divergence of the streams whose bound is met after a sync that followed `hours` of changes (in `spans`, their span). */
export function withinBounds(
  d: Record<string, Divergence>,
  hours: number,
  outcomes: readonly StreamOutcome[],
  spans: Record<string, Span> = {},
): Record<string, Divergence> {
  const due = dueForComparison(hours, outcomes);
  return Object.fromEntries(Object.entries(d).filter(([name]) => due.has(name) || name in spans));
}
