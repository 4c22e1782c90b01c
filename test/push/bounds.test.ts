import { describe, expect, it } from 'vitest';
import { MAX_CHANGES, MAX_DEPTH, checkBounds } from '../../src/push/bounds.ts';

/** What any push must stay within before it is validated or stored. */

const nested = (depth: number): unknown => (depth === 0 ? 'x' : [nested(depth - 1)]);

describe('push bounds', () => {
  it(`takes ${MAX_CHANGES} changes and refuses one more, naming the body`, () => {
    expect(checkBounds(Array.from({ length: MAX_CHANGES }, () => ({ FirstName: 'A' })))).toBeUndefined();
    expect(checkBounds(Array.from({ length: MAX_CHANGES + 1 }, () => ({})))).toEqual({
      kind: 'too-many',
      message: `at most ${MAX_CHANGES} changes at once, got ${MAX_CHANGES + 1}`,
    });
  });

  it(`takes a change nested ${MAX_DEPTH} deep and refuses one level more, naming the field by its path`, () => {
    expect(checkBounds([{ ErrorList: nested(MAX_DEPTH - 1) }])).toBeUndefined();
    expect(checkBounds([{ ok: 1 }, { ErrorList: nested(MAX_DEPTH) }])).toEqual({
      kind: 'bad-item',
      index: 1,
      field: `ErrorList${'.0'.repeat(MAX_DEPTH - 1)}`,
      message: `nested deeper than ${MAX_DEPTH} levels`,
    });
  });

  it('walks a very deep value without overflowing the stack', () => {
    let deep: unknown = 'x';
    for (let i = 0; i < 200_000; i++) deep = [deep];
    expect(checkBounds([deep])).toMatchObject({ kind: 'bad-item', message: /nested deeper/ });
  });

  it('refuses what jsonb cannot hold: NUL in a value or a name, a lone surrogate; takes a surrogate pair', () => {
    expect(checkBounds([{ FirstName: 'Ada\u0000' }])).toMatchObject({ field: 'FirstName', message: /NUL/ });
    expect(checkBounds([{ 'Fir\u0000st': 'Ada' }])).toMatchObject({ field: 'body', message: /field name/ });
    expect(checkBounds([{ LastName: 'x\uD800' }])).toMatchObject({
      field: 'LastName',
      message: /lone UTF-16 surrogate/,
    });
    expect(checkBounds([{ LastName: '\uDC00x' }])).toMatchObject({ field: 'LastName' });
    expect(checkBounds([{ LastName: 'Duck 🦆' }])).toBeUndefined();
  });
});
