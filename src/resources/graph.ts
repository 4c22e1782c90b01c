import type { StreamDef } from './stream.ts';

/**
 * The streams' `dependsOn`, walked once into one graph: the run order, each stream's own dependencies, and all
 * the streams a set of streams needs. The catalog's order, the runner's selection and the queue's jobs read it.
 */
export interface StreamGraph<S extends StreamDef = StreamDef> {
  /**
   * Every stream, a stream after the streams it depends on (a topological order): the complete lists first (one
   * cheap read each: the reference data and people other tables refer to), then the others, each in declaration
   * order otherwise.
   */
  readonly order: readonly S[];
  /** The streams `name` names in its `dependsOn` (none for a name the graph does not hold). */
  dependsOn(name: string): readonly string[];
  /** The streams `names` depend on, directly or through others, that `names` do not hold themselves. */
  dependenciesOf(names: readonly string[]): string[];
  /** The streams that depend on `names`, directly or through others, that `names` do not hold themselves. */
  dependentsOf(names: readonly string[]): string[];
}

export function streamGraph<S extends StreamDef>(streams: readonly S[]): StreamGraph<S> {
  const byName = new Map(streams.map((s) => [s.name, s]));
  const direct = new Map(streams.map((s) => [s.name, (s.dependsOn ?? []) as readonly string[]]));
  const order = topologicalOrder(
    [...streams.filter((s) => s.strategy.kind === 'full'), ...streams.filter((s) => s.strategy.kind !== 'full')],
    byName,
  );
  const closure = new Map(order.map((s) => [s.name, new Set<string>()]));
  // In topological order a stream's dependencies have their closures already.
  for (const s of order) {
    const all = closure.get(s.name)!;
    for (const d of direct.get(s.name)!) {
      all.add(d);
      for (const x of closure.get(d)!) all.add(x);
    }
  }
  return {
    order,
    dependsOn: (name) => direct.get(name) ?? [],
    dependenciesOf(names) {
      const held = new Set(names);
      const needed = new Set(names.flatMap((n) => [...(closure.get(n) ?? [])]));
      return order.map((s) => s.name).filter((n) => needed.has(n) && !held.has(n));
    },
    dependentsOf(names) {
      const held = new Set(names);
      return order.map((s) => s.name).filter((n) => !held.has(n) && [...closure.get(n)!].some((d) => held.has(d)));
    },
  };
}

function topologicalOrder<S extends StreamDef>(streams: readonly S[], byName: ReadonlyMap<string, S>): S[] {
  const placed = new Set<string>();
  const visiting = new Set<string>();
  const out: S[] = [];
  const place = (s: S): void => {
    if (placed.has(s.name)) return;
    if (visiting.has(s.name)) throw new Error(`streams depend on each other: ${[...visiting, s.name].join(' → ')}`);
    visiting.add(s.name);
    for (const d of s.dependsOn ?? []) place(byName.get(d)!);
    visiting.delete(s.name);
    placed.add(s.name);
    out.push(s);
  };
  streams.forEach(place);
  return out;
}
