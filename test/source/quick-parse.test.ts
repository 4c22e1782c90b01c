import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { createSandboxData } from '../../src/sandbox/data.ts';
import { endpoints, streams, type EndpointName } from '../../src/resources/index.ts';
import { partitionsOf } from '../../src/sync/partitions.ts';
import { quickParse, REFUSED } from '../../src/source/quick-parse.ts';
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
    out.push(
      rest,
      { ...record, [k]: null },
      { ...record, [k]: 'text' },
      { ...record, [k]: 1.5 },
      { ...record, [k]: { Nested: true } },
      { ...record, [k]: [] },
    );
  }
  return out;
}

describe('the quick parse', () => {
  const records = sandboxRecords();

  it('answers only for records zod accepts, and answers what zod returns, the order of fields included', () => {
    let answered = 0;
    let checked = 0;
    for (const [name, list] of records) {
      const schema = endpoints[name].item as z.ZodType;
      const quick = quickParse(schema);
      for (const r of list.slice(0, 40)) {
        for (const v of [r, ...variants(r as Record<string, unknown>)]) {
          checked++;
          const before = JSON.stringify(v);
          const answer = quick(v);
          expect(JSON.stringify(v), `${name}: the record given is left as it was`).toBe(before);
          if (answer === REFUSED) continue;
          answered++;
          const parsed = schema.safeParse(v);
          expect(parsed.success, `${name}: ${before}`).toBe(true);
          expect(JSON.stringify(answer), `${name}: ${before}`).toBe(JSON.stringify(parsed.data));
        }
      }
    }
    expect(checked).toBeGreaterThan(5000);
    expect(answered).toBeGreaterThan(2000);
  });

  it("answers for every record the sandbox sends, and keeps those already in their schema's order", () => {
    // Form responses' answers gain a field; these lists send fields in another order or under aliases.
    const rebuilt = new Set<EndpointName>([
      'formResponses',
      'runLogFormResponses',
      'individualCertifications',
      'individualCourses',
      'timeOffRequests',
      'formAudit',
      'individuals',
      'jobTitles',
    ]);
    for (const [name, list] of records) {
      const schema = endpoints[name].item as z.ZodType;
      const quick = quickParse(schema);
      const answers = list.map((r) => quick(r));
      const refused = answers.filter((a) => a === REFUSED).length;
      const kept = answers.filter((a, i) => a === list[i]).length;
      expect({ name, refused }).toEqual({ name, refused: 0 });
      if (!rebuilt.has(name)) expect({ name, kept }).toEqual({ name, kept: list.length });
      const { items } = parseItems(schema, list);
      expect(items.map((i) => JSON.stringify(i))).toEqual(list.map((r) => JSON.stringify(schema.parse(r))));
    }
  });

  it('keeps what zod keeps, rebuilds what zod reorders, renames or transforms purely, and leaves other transforms to zod', () => {
    const schema = record({ Id: int, Name: opt(nameText), At: isoDate, Tag: opt(str) }, { Tag: 'Label' });
    const loose = record({ Id: int, Name: opt(nameText), Ref: opt(record({ A: int, B: opt(str) })) });
    const quick = quickParse(loose);
    for (const v of [
      { Id: 1, Name: 'Dana', Other: [1] },
      { Id: 1, Name: 'Dana', Ref: { A: 1, B: 'b', C: 2 } },
    ])
      expect(quick(v)).toBe(v);
    const rebuilt = [
      [{ Name: 'Dana', Id: 1 }, '{"Id":1,"Name":"Dana"}'],
      [{ Other: 1, Id: 1 }, '{"Id":1,"Other":1}'],
      [{ Id: 1, Ref: { B: 'b', A: 1 } }, '{"Id":1,"Ref":{"A":1,"B":"b"}}'],
      [{ Ref: { C: 2, A: 1 }, X: null, Id: 1 }, '{"Id":1,"Ref":{"A":1,"C":2},"X":null}'],
    ] as const;
    for (const [v, parsed] of rebuilt) {
      const answer = quick(v);
      expect(answer).not.toBe(v);
      expect(JSON.stringify(answer)).toBe(parsed);
    }
    expect(JSON.stringify(quick({ Id: 1, Name: 7 }))).toBe('{"Id":1,"Name":"7"}');
    expect(quickParse(record({ Id: int.transform((n) => n + 1) }))({ Id: 1 })).toBe(REFUSED);
    expect(quick({ Id: 1.5 })).toBe(REFUSED);
    expect(quick({ Name: 'Dana' })).toBe(REFUSED);
    const kept = { Id: 1, At: '2024-01-01', Tag: 'x' };
    expect(quickParse(schema)(kept)).toBe(kept);
    expect(JSON.stringify(quickParse(schema)({ Label: 'x', Id: 1, At: '2024-01-01' }))).toBe(
      '{"Id":1,"At":"2024-01-01","Tag":"x"}',
    );
    const { items, rejects } = parseItems(loose, [{ Id: 1, Name: 7 }, { Id: 'x' }]);
    expect(items).toEqual([{ Id: 1, Name: '7' }]);
    expect(rejects.map((r) => r.reason)).toEqual([expect.stringContaining('Id')]);
  });
});
