import { describe, expect, it } from 'vitest';
import { IncompleteJson, JsonArraySplitter } from '../../src/source/json-array.ts';

/** Feeds `text` in chunks of `size` bytes; returns every element and the whole body when it was no array. */
function split(text: string, size: number): { elements: unknown[]; whole?: unknown } {
  const s = new JsonArraySplitter();
  const bytes = Buffer.from(text, 'utf8');
  const elements: unknown[] = [];
  for (let i = 0; i < bytes.length; i += size) elements.push(...s.push(bytes.subarray(i, i + size)));
  elements.push(...s.end());
  return s.isArray ? { elements } : { elements, whole: JSON.parse(s.wholeBody().toString()) };
}

describe('JsonArraySplitter', () => {
  const list = [
    { a: 1, s: 'x, ] } { [ "quoted" \\ ', nested: [{ b: [1, 2, { c: null }] }] },
    'a string with ] and , and \\"',
    12.5e3,
    -3,
    true,
    null,
    [],
    {},
    { unicode: 'Zoë — 東京 🚑' },
  ];

  it('gives every element of an array, whatever the chunk boundaries', () => {
    const text = JSON.stringify(list, null, 1);
    for (const size of [1, 2, 3, 7, 64, text.length])
      expect(split(text, size).elements, `chunks of ${size}`).toEqual(list);
    expect(split(' [ ] ', 1).elements).toEqual([]);
    expect(split('[1,2]', 1).elements).toEqual([1, 2]);
  });

  it('keeps a body that is not an array whole', () => {
    expect(split('{"Data":[1,2],"HasMoreResults":false}', 3)).toEqual({
      elements: [],
      whole: { Data: [1, 2], HasMoreResults: false },
    });
  });

  it('refuses a list cut short, an empty body, a broken element and trailing data', () => {
    for (const text of ['[{"a":1},{"a":', '[1,2', '', '[{"a":}]', '[1] x', '[1,]', '[,1]', '[1 2]']) {
      expect(() => split(text, 2), JSON.stringify(text)).toThrow(IncompleteJson);
    }
  });
});
