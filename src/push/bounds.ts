/**
 * What any push must stay within before it is validated or stored: how many changes at once, how deep a change
 * nests, and strings Postgres can hold (jsonb refuses the NUL character and lone UTF-16 surrogates).
 */

/** Changes in one push (one HTTP body, one CLI file, one library call). */
export const MAX_CHANGES = 10_000;
/** A change is an object of scalars, with an array of strings at most: anything deeper is not a change. */
export const MAX_DEPTH = 8;

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const unstorable = (s: string) => s.includes('\u0000') || LONE_SURROGATE.test(s);

export type OutOfBounds =
  | { kind: 'too-many'; message: string }
  | { kind: 'bad-item'; index: number; field: string; message: string };

export function checkBounds(items: readonly unknown[]): OutOfBounds | undefined {
  if (items.length > MAX_CHANGES)
    return { kind: 'too-many', message: `at most ${MAX_CHANGES} changes at once, got ${items.length}` };
  for (let index = 0; index < items.length; index++) {
    const bad = badValue(items[index]);
    if (bad) return { kind: 'bad-item', index, ...bad };
  }
  return undefined;
}

/** The first value of one change that is out of bounds, walked without recursion so depth cannot overflow the stack. */
function badValue(root: unknown): { field: string; message: string } | undefined {
  const todo: { value: unknown; path: string; depth: number }[] = [{ value: root, path: '', depth: 0 }];
  while (todo.length > 0) {
    const { value, path, depth } = todo.pop()!;
    const field = path || 'body';
    if (typeof value === 'string') {
      if (unstorable(value))
        return { field, message: 'must not hold the NUL character (\\u0000) or a lone UTF-16 surrogate' };
      continue;
    }
    if (typeof value !== 'object' || value === null) continue;
    if (depth >= MAX_DEPTH) return { field, message: `nested deeper than ${MAX_DEPTH} levels` };
    for (const [k, v] of Object.entries(value)) {
      if (unstorable(k)) return { field, message: 'a field name holds the NUL character or a lone surrogate' };
      todo.push({ value: v, path: path ? `${path}.${k}` : k, depth: depth + 1 });
    }
  }
  return undefined;
}
