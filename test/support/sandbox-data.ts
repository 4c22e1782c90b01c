import type { SandboxData } from '../../src/sandbox/service.ts';

type Item = Record<string, unknown>;

/** The sandbox's data with every item its list answers carry passed through `map` (the item, or a changed copy). */
export function mappingItems(data: SandboxData, map: (endpoint: string, item: Item) => Item): SandboxData {
  return {
    ...data,
    read(endpoint, query, page) {
      const r = data.read(endpoint, query, page);
      if (!r.ok) return r;
      return { ok: true, value: { ...r.value, items: r.value.items.map((it) => map(endpoint, it as Item)) } };
    },
  };
}
