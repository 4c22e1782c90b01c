import { createHash, createHmac } from 'node:crypto';
import { sha256Hex } from '../digest.ts';

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

/** SHA-256's block: the key's pads fill one. */
const BLOCK_BYTES = 64;

export function personalHmac(secret: string): PersonalHmac {
  let made = byKey.get(secret);
  if (made) return made;
  const key = createHash('sha256').update(secret, 'utf8').digest();
  const padded = Buffer.alloc(BLOCK_BYTES);
  key.copy(padded);
  const xor = (byte: number) => Buffer.from(padded.map((b) => b ^ byte));
  const pads = { inner: xor(0x36), outer: xor(0x5c) };
  const memo = new Map<string, string>();
  const of = (value: string) => {
    let h = memo.get(value);
    if (h === undefined) {
      if (memo.size >= MEMO_ENTRIES) memo.clear();
      memo.set(value, (h = createHmac('sha256', key).update(value, 'utf8').digest('hex')));
    }
    return h;
  };
  made = { of, pads, wrap: contentHashWrap(pads.inner) };
  byKey.set(secret, made);
  return made;
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
