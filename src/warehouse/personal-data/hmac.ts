import { createHash } from 'node:crypto';
import { sha256Hex } from '../digest.ts';
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
 * Values hashed lately, per key: the same names and e-mail addresses come back page after page and sync after sync,
 * and a lookup costs a fraction of a hash. Emptied when full.
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
  return made;
}

/** Values up to a third of this many bytes are hashed in a scratch buffer; a longer one gets its own. */
const SCRATCH_BYTES = 1024;

const encoder = new TextEncoder();

/**
 * SHA-256 of `prefix ‖ value` (UTF-8) into eight words, the prefix's blocks hashed once: the value is written in a
 * scratch buffer, so no buffer is made per value.
 */
function wordsAfter(prefix: Uint8Array): (value: string, out: Int32Array) => void {
  const sha = resumedSha256(prefix);
  const scratch = new Uint8Array(SCRATCH_BYTES + PADDING_BYTES);
  return (value, out) => {
    if (value.length * 3 > SCRATCH_BYTES) {
      const encoded = Buffer.from(value, 'utf8');
      const own = new Uint8Array(encoded.length + PADDING_BYTES);
      own.set(encoded);
      return sha.digest(own, encoded.length, out);
    }
    sha.digest(scratch, utf8Into(scratch, 0, value), out);
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
  const inner = wordsAfter(pads.inner);
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

/** `p`, which starts a wrapped content hash and no clear one (hex). */
const P = 0x70;

/** The length of a content hash (sha256Hex32), which the wrap's scratch buffer has room for. */
const CONTENT_HASH_CHARS = 32;

/**
 * `p` and the first 31 hex digits of sha256(inner pad ‖ label ‖ hash). One call into node:crypto, which hashes its
 * two blocks in native code, costs less than hashing them here: a changed row pays it once.
 */
function contentHashWrap(inner: Buffer): (hash: string) => string {
  const prefix = Buffer.concat([inner, Buffer.from(CONTENT_LABEL, 'utf8')]);
  const scratch = Buffer.alloc(prefix.length + CONTENT_HASH_CHARS);
  prefix.copy(scratch);
  return (hash) => {
    const input = asciiInto(scratch, prefix.length, hash)
      ? scratch
      : Buffer.concat([prefix, Buffer.from(hash, 'utf8')]);
    return `p${sha256Hex(input).slice(0, 31)}`;
  };
}

/** Writes `text` at `at` when it fills the rest of `bytes` exactly and is ASCII; answers whether it did. */
function asciiInto(bytes: Buffer, at: number, text: string): boolean {
  if (text.length !== bytes.length - at) return false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0x80) return false;
    bytes[at + i] = c;
  }
  return true;
}

/**
 * A row's content hash once a policy other than keep applies to it: keyed, so it says nothing of the clear values
 * it was computed from, and marked (`p`), so it is wrapped once. Computed over the clear values, it stays the same
 * whichever fields are hashed or blocked: a policy change alone makes no new history version. The wrap only hides
 * a hash and proves nothing, so a secret prefix serves: one SHA-256 a row where an HMAC takes two.
 */
export function wrappedContentHash(hmac: PersonalHmac, hash: string): string {
  return hash.charCodeAt(0) === P ? hash : hmac.wrap(hash);
}

/** The same in SQL, over a column holding the content hash; `inner` is the inner pad's parameter. */
export function wrappedContentHashSql(column: string, inner: string): string {
  // A content hash is hex digits: decode(…, 'escape') gives the bytes convert_to would, and is immutable, which
  // Citus requires of a function inside the CASE of an UPDATE.
  const label = Buffer.from(CONTENT_LABEL, 'utf8').toString('hex');
  return `case when ${column} like 'p%' then ${column} else 'p' || left(encode(sha256(${inner} || '\\x${label}'::bytea || decode(${column}, 'escape')), 'hex'), 31) end`;
}

/** The suppression-list entry of a person's id: `service_id:N` or `employee_number:X`, keyed. */
export function personHash(hmac: PersonalHmac, kind: 'service_id' | 'employee_number', value: string | number): string {
  return hmac.of(`${kind}:${value}`);
}
