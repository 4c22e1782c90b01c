import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createSandboxData } from '../../src/sandbox/data.ts';
import { endpoints, streams, type EndpointName } from '../../src/resources/index.ts';
import { partitionsOf } from '../../src/sync/partitions.ts';
import { inPlace } from '../../src/source/in-place.ts';
import { parseItems } from '../../src/source/paging.ts';
import { int, isoDate, nameText, opt, record, str } from '../../src/source/schemas/common.ts';

/** Every record the sandbox holds for each synced list, as it travels: through JSON. */
function sandboxRecords(): Map<EndpointName, unknown[]> {
  const data = createSandboxData({ seed: 11, size: 'tiny' });
  const out = new Map<EndpointName, unknown[]>();
  for (const stream of streams) {
    const name = stream.endpoint.name as EndpointName;
    for (const p of partitionsOf(stream, { formIds: data.formIds(), runTypeIds: data.runTypeIds() })) {
      const records = JSON.parse(JSON.stringify(data.truth(name, p.query as never))) as unknown[];
      out.set(name, [...(out.get(name) ?? []), ...records]);
    }
  }
  return out;
}

/** A record made wrong in one of the ways a service can send it wrong, or moved around. */
function variants(record: Record<string, unknown>): unknown[] {
  const keys = Object.keys(record);
  const out: unknown[] = [
    { Unknown: 1, ...record },
    Object.fromEntries([...keys].reverse().map((k) => [k, record[k]])),
    null,
    [record],
  ];
  for (const k of keys) {
    const { [k]: _dropped, ...rest } = record;
    out.push(rest, { ...record, [k]: null }, { ...record, [k]: 'text' }, { ...record, [k]: 1.5 }, { ...record, [k]: { Nested: true } }, { ...record, [k]: [] });
  }
  return out;
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

describe('records kept as parsed', () => {
  const records = sandboxRecords();

  it('are only those zod accepts and returns unchanged, the order of fields included', () => {
    let accepted = 0;
    let checked = 0;
    for (const [name, list] of records) {
      const schema = endpoints[name].item as z.ZodType;
      const keeps = inPlace(schema);
      for (const r of list.slice(0, 40)) {
        for (const v of [r, ...variants(r as Record<string, unknown>)]) {
          checked++;
          if (!keeps(v)) continue;
          accepted++;
          const parsed = schema.safeParse(v);
          expect(parsed.success, `${name}: ${JSON.stringify(v)}`).toBe(true);
          expect(same(parsed.data, v), `${name}: ${JSON.stringify(v)}`).toBe(true);
        }
      }
    }
    expect(checked).toBeGreaterThan(5000);
    expect(accepted).toBeGreaterThan(1000);
  });

  it('are every record of the lists the sandbox sends in their schemas\' order, the shift lists among them', () => {
    // Form responses' answers gain a field in zod; these lists send their fields in another order than the schema's.
    const viaZod = new Set<EndpointName>(['formResponses', 'runLogFormResponses', 'individualCertifications', 'individualCourses']);
    for (const [name, list] of records) {
      const schema = endpoints[name].item as z.ZodType;
      const { items } = parseItems(schema, list);
      const kept = items.filter((item, i) => item === list[i]).length;
      if (viaZod.has(name)) expect({ name, kept: kept < list.length }).toEqual({ name, kept: true });
      else expect({ name, kept }).toEqual({ name, kept: list.length });
      expect(items.map((i) => JSON.stringify(i))).toEqual(list.map((r) => JSON.stringify(schema.parse(r))));
    }
  });

  it('leave what zod changes to zod: names sent as numbers, aliases, fields out of order', () => {
    const schema = record({ Id: int, Name: opt(nameText), At: isoDate, Tag: opt(str) }, { Tag: 'Label' });
    const loose = record({ Id: int, Name: opt(nameText), Ref: opt(record({ A: int, B: opt(str) })) });
    expect(inPlace(loose)({ Id: 1, Name: 'Dana', Other: [1] })).toBe(true);
    expect(inPlace(loose)({ Id: 1, Name: 'Dana', Ref: { A: 1, B: 'b', C: 2 } })).toBe(true);
    expect(inPlace(loose)({ Name: 'Dana', Id: 1 })).toBe(false);
    expect(inPlace(loose)({ Id: 1, Name: 7 })).toBe(false);
    expect(inPlace(loose)({ Other: 1, Id: 1 })).toBe(false);
    expect(inPlace(loose)({ Id: 1, Ref: { B: 'b', A: 1 } })).toBe(false);
    expect(inPlace(loose)({ Id: 1, Ref: { C: 2, A: 1 } })).toBe(false);
    expect(inPlace(loose)({ Id: 1.5 })).toBe(false);
    expect(inPlace(schema)({ Id: 1, At: '2024-01-01', Tag: 'x' })).toBe(true);
    expect(inPlace(schema)({ Id: 1, At: '2024-01-01', Label: 'x' })).toBe(false);
    const { items, rejects } = parseItems(loose, [{ Id: 1, Name: 7 }, { Id: 'x' }]);
    expect(items).toEqual([{ Id: 1, Name: '7' }]);
    expect(rejects.map((r) => r.reason)).toEqual([expect.stringContaining('Id')]);
  });
});
