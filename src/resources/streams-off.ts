import { CompanyError } from '../warehouse/company-records.ts';
import type { StreamRows } from '../warehouse/company-streams.ts';
import type { Target } from '../warehouse/targets.ts';
import { isStreamName, STREAM_NAMES, streamByName, streamDependencies, type StreamName } from './index.ts';

/**
 * Which streams a company may turn off or on, from the streams' dependencies: a stream others read is turned off
 * only with them, and a stream is turned on only with what it reads. Also the tables a stream's rows land in, from
 * its declaration, for a purge.
 */

export type StreamsChange = { off: readonly StreamName[] } | { on: readonly StreamName[] };

const list = (names: readonly string[]) => names.join(', ');
const refuse = (kind: 'stream_depended_on' | 'dependency_off', key: string, why: string) =>
  new CompanyError(kind, `company ${key}: ${why}`);

/** The streams off once `change` is made to `current`, in run order; throws the CompanyError that refuses it. */
export function streamsOffAfter(key: string, current: readonly string[], change: StreamsChange): string[] {
  const now = new Set(current);
  if ('off' in change) {
    const turned = new Set<string>([...now, ...change.off]);
    for (const s of change.off) {
      const readers = streamDependencies.dependentsOf([s]).filter((d) => !turned.has(d));
      if (readers.length > 0)
        throw refuse(
          'stream_depended_on',
          key,
          `${s} is read by ${list(readers)}: turn ${readers.length > 1 ? 'them' : 'it'} off too, or keep ${s}`,
        );
    }
    return ordered(turned);
  }
  const on = new Set<string>(change.on);
  for (const s of change.on) {
    const needs = streamDependencies.dependenciesOf([s]).filter((d) => now.has(d) && !on.has(d));
    if (needs.length > 0)
      throw refuse(
        'dependency_off',
        key,
        `${s} reads ${list(needs)}, which ${needs.length > 1 ? 'are' : 'is'} off: turn ${list(needs)} on too`,
      );
  }
  return ordered(new Set([...now].filter((n) => !on.has(n))));
}

/** In run order; a name the catalog no longer has (a stream removed in an upgrade) stays, last. */
function ordered(names: ReadonlySet<string>): string[] {
  return [...STREAM_NAMES.filter((n) => names.has(n)), ...[...names].filter((n) => !isStreamName(n))];
}

function targetTables(t: Target): string[] {
  return [
    t.table,
    ...(t.children ?? []).map((c) => c.table),
    ...(t.history ? [t.history] : []),
    ...(t.envelopeTarget ? targetTables(t.envelopeTarget.target) : []),
  ];
}

/** The tables a stream's rows land in: its target, child tables, history, and what its envelope fills. */
export function streamRows(name: StreamName): StreamRows {
  return { stream: name, tables: targetTables(streamByName(name)!.target) };
}
