import { createHash } from 'node:crypto';
import { BLOCK_BYTES, PADDING_BYTES, resumedSha256, wordsInto } from './sha256.ts';

/**
 * HMAC-SHA-256 under the personal-data key, in Node for the row path and in SQL (`personal_hmac`, migration 0013)
 * for what is already stored: both give the same hex for the same value.
 */
export interface PersonalHmac {
  /** Hex HMAC of a value. */
  readonly of: (value: string) => string;
  /** The key's inner and outer pads, which `personal_hmac` takes in place of the key. */
  readonly pads: { readonly inner: Buffer; readonly outer: Buffer };
  /** A content hash's wrap: `p` and the first 31 hex digits of sha256(inner pad ‖ `CONTENT_LABEL` ‖ hash). */
  readonly wrap: (hash: string) => string;
}

/**
 * Values hashed lately, per key: the same names, e-mail addresses and content hashes come back page after page and
 * sync after sync, and a lookup costs a fraction of a hash. Emptied when full.
 */
const MEMO_ENTRIES = 100_000;

const byKey = new Map<string, PersonalHmac>();

export function personalHmac(secret: string): PersonalHmac {
  let made = byKey.get(secret);
  if (made) return made;
  const key = createHash('sha256').update(secret, 'utf8').digest();
  const padded = Buffer.alloc(BLOCK_BYTES);
  key.copy(padded);
  const xor = (byte: number) => Buffer.from(padded.map((b) => b ^ byte));
  const pads = { inner: xor(0x36), outer: xor(0x5c) };
  const hex = hmacOverPads(pads);
  const memo = new Map<string, string>();
  const of = (value: string) => {
    let h = memo.get(value);
    if (h === undefined) {
      if (memo.size >= MEMO_ENTRIES) memo.clear();
      memo.set(value, (h = hex(value)));
    }
    return h;
  };
  made = { of, pads, wrap: contentHashWrap(pads.inner) };
  byKey.set(secret, made);
  wraps.set(made, new Map());
  return made;
}

/** Values up to a third of this many bytes are hashed in a scratch buffer; a longer one gets its own. */
const SCRATCH_BYTES = 1024;

const encoder = new TextEncoder();

/**
 * SHA-256 of `prefix ‖ head ‖ value` (UTF-8) into eight words, the prefix's blocks hashed once: the value is written
 * after the head in a scratch buffer, so no buffer is made per value.
 */
function wordsAfter(prefix: Uint8Array, head: string): (value: string, out: Int32Array) => void {
  const sha = resumedSha256(prefix);
  const headBytes = Buffer.from(head, 'utf8');
  const scratch = new Uint8Array(headBytes.length + SCRATCH_BYTES + PADDING_BYTES);
  scratch.set(headBytes);
  return (value, out) => {
    if (value.length * 3 > SCRATCH_BYTES) {
      const encoded = Buffer.from(value, 'utf8');
      const own = new Uint8Array(headBytes.length + encoded.length + PADDING_BYTES);
      own.set(headBytes);
      own.set(encoded, headBytes.length);
      return sha.digest(own, headBytes.length + encoded.length, out);
    }
    sha.digest(scratch, headBytes.length + utf8Into(scratch, headBytes.length, value), out);
  };
}

/** Writes `value` as UTF-8 at `at` (the caller made room for three bytes a character); answers the bytes written. */
function utf8Into(bytes: Uint8Array, at: number, value: string): number {
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c >= 0x80) return i + encoder.encodeInto(value.slice(i), bytes.subarray(at + i)).written;
    bytes[at + i] = c;
  }
  return value.length;
}

/**
 * HMAC as its definition spells it, sha256(outer pad ‖ sha256(inner pad ‖ value)), resumed after the pads: a
 * short value costs two compressions.
 */
function hmacOverPads(pads: { inner: Buffer; outer: Buffer }): (value: string) => string {
  const inner = wordsAfter(pads.inner, '');
  const outer = resumedSha256(pads.outer);
  const words = new Int32Array(8);
  const innerDigest = new Uint8Array(32 + PADDING_BYTES);
  const bytes = Buffer.alloc(32);
  return (value) => {
    inner(value, words);
    wordsInto(words, innerDigest, 0);
    outer.digest(innerDigest, 32, words);
    wordsInto(words, bytes, 0);
    return bytes.toString('hex');
  };
}

/** A hashed value as the `hash` policy stores it: 64 hex digits, which no clear value of these fields is. */
export const HASHED = /^[0-9a-f]{64}$/;

/** What sets a wrapped content hash's input apart from every other value hashed under the key. */
const CONTENT_LABEL = 'wfsync-content:';

const HEX_DIGITS = Buffer.from('0123456789abcdef', 'latin1');

/** `p`, which starts a wrapped content hash and no clear one (hex). */
const P = 0x70;

/** `p` and the first 31 hex digits of sha256(inner pad ‖ label ‖ hash), written as they are made. */
function contentHashWrap(inner: Buffer): (hash: string) => string {
  const digest = wordsAfter(inner, CONTENT_LABEL);
  const words = new Int32Array(8);
  const text = Buffer.alloc(32);
  text[0] = P;
  return (hash) => {
    digest(hash, words);
    for (let i = 0; i < 31; i++) text[i + 1] = HEX_DIGITS[(words[i >>> 3]! >>> (28 - 4 * (i & 7))) & 15]!;
    return text.toString('latin1', 0, 32);
  };
}

/**
 * A row's content hash once a policy other than keep applies to it: keyed, so it says nothing of the clear values
 * it was computed from, and marked (`p`), so it is wrapped once. Computed over the clear values, it stays the same
 * whichever fields are hashed or blocked: a policy change alone makes no new history version. The wrap only hides
 * a hash and proves nothing, so a secret prefix serves: one SHA-256 a row where an HMAC takes two.
 *
 * `remember`: keep it for the row's next sight. A page of keys never stored (a backfill) passes false: its rows
 * are not read again soon, and keeping them would push out the rows that are.
 */
export function wrappedContentHash(hmac: PersonalHmac, hash: string, remember = true): string {
  if (hash.charCodeAt(0) === P) return hash;
  if (!remember) return hmac.wrap(hash);
  const memo = wraps.get(hmac)!;
  let wrapped = memo.get(hash);
  if (wrapped === undefined) {
    if (memo.size >= MEMO_ENTRIES) memo.clear();
    memo.set(hash, (wrapped = hmac.wrap(hash)));
  }
  return wrapped;
}

/** Wrapped content hashes lately made, per key: an unchanged row has the same one sync after sync. */
const wraps = new WeakMap<PersonalHmac, Map<string, string>>();

/** The same in SQL, over a column holding the content hash; `inner` is the inner pad's parameter. */
export function wrappedContentHashSql(column: string, inner: string): string {
  return `case when ${column} like 'p%' then ${column} else 'p' || left(encode(sha256(${inner} || convert_to('${CONTENT_LABEL}' || ${column}, 'UTF8')), 'hex'), 31) end`;
}

/** The suppression-list entry of a person's id: `service_id:N` or `employee_number:X`, keyed. */
export function personHash(hmac: PersonalHmac, kind: 'service_id' | 'employee_number', value: string | number): string {
  return hmac.of(`${kind}:${value}`);
}
