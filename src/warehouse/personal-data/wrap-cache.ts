/**
 * Wrapped content hashes lately made: an unchanged row has the same one sync after sync, and a lookup here costs
 * a fraction of a wrap. One table for every key, its slot read from the hash's first hex digits (content hashes
 * are uniform): no hashing of the key, no growth and no clearing, a fixed size whatever the number of keys. A
 * hash meeting another in its slot takes the slot.
 */

const SLOT_BITS = 17;
const MASK = (1 << SLOT_BITS) - 1;

const owners = new Array<object | undefined>(1 << SLOT_BITS).fill(undefined);
const hashes = new Array<string | undefined>(1 << SLOT_BITS).fill(undefined);
const wrapped = new Array<string | undefined>(1 << SLOT_BITS).fill(undefined);

/** The slot of a hash: its first five hex digits' value (any other text lands somewhere, and is compared whole). */
function slotOf(hash: string): number {
  let slot = 0;
  for (let i = 0; i < 5; i++) {
    const c = hash.charCodeAt(i);
    slot = (slot << 4) | (c <= 0x39 ? c - 0x30 : c - 0x57);
  }
  return slot & MASK;
}

/** The wrap of `hash` under `owner`'s key, made by `wrap` unless kept. */
export function cachedWrap(owner: object, hash: string, wrap: (hash: string) => string): string {
  const slot = slotOf(hash);
  if (owners[slot] === owner && hashes[slot] === hash) return wrapped[slot]!;
  const w = wrap(hash);
  owners[slot] = owner;
  hashes[slot] = hash;
  wrapped[slot] = w;
  return w;
}
