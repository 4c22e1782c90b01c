/**
 * SHA-256 (FIPS 180-4) resumed from the state after a prefix of whole blocks. An HMAC's pads are a block each, so
 * with their states kept, the HMAC of a value under 56 bytes is two compressions, where node:crypto's one-shot
 * hashes do four and cross into C++ twice; a first sync pays it for every distinct hashed value. node:crypto's own
 * hashes check this one in the tests.
 */

const K = Int32Array.from(
  [
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98,
    0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
    0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8,
    0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
    0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819,
    0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
    0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
    0xc67178f2,
  ],
  (k) => k | 0,
);

const INITIAL = Int32Array.from(
  [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19],
  (h) => h | 0,
);

export const BLOCK_BYTES = 64;

/** Room a message buffer needs past its message for the padding. */
export const PADDING_BYTES = BLOCK_BYTES + 8;

const schedule = new Int32Array(64);

/** Folds one 64-byte block of `bytes` at `at` into `state`. */
function compress(state: Int32Array, bytes: Uint8Array, at: number): void {
  const w = schedule;
  for (let i = 0; i < 16; i++) {
    const j = at + i * 4;
    w[i] = (bytes[j]! << 24) | (bytes[j + 1]! << 16) | (bytes[j + 2]! << 8) | bytes[j + 3]!;
  }
  for (let i = 16; i < 64; i++) {
    const x = w[i - 15]!;
    const y = w[i - 2]!;
    const s0 = ((x >>> 7) | (x << 25)) ^ ((x >>> 18) | (x << 14)) ^ (x >>> 3);
    const s1 = ((y >>> 17) | (y << 15)) ^ ((y >>> 19) | (y << 13)) ^ (y >>> 10);
    w[i] = (w[i - 16]! + s0 + w[i - 7]! + s1) | 0;
  }
  let a = state[0]!,
    b = state[1]!,
    c = state[2]!,
    d = state[3]!,
    e = state[4]!,
    f = state[5]!,
    g = state[6]!,
    h = state[7]!;
  for (let i = 0; i < 64; i++) {
    const t1 =
      (h +
        (((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7))) +
        ((e & f) ^ (~e & g)) +
        K[i]! +
        w[i]!) |
      0;
    const t2 =
      ((((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10))) +
        ((a & b) ^ (a & c) ^ (b & c))) |
      0;
    h = g;
    g = f;
    f = e;
    e = (d + t1) | 0;
    d = c;
    c = b;
    b = a;
    a = (t1 + t2) | 0;
  }
  state[0] = (state[0]! + a) | 0;
  state[1] = (state[1]! + b) | 0;
  state[2] = (state[2]! + c) | 0;
  state[3] = (state[3]! + d) | 0;
  state[4] = (state[4]! + e) | 0;
  state[5] = (state[5]! + f) | 0;
  state[6] = (state[6]! + g) | 0;
  state[7] = (state[7]! + h) | 0;
}

/** A SHA-256 with a prefix of whole blocks already hashed. */
export interface ResumedSha256 {
  /**
   * The digest of prefix ‖ `message[0, length)` into `out` (eight big-endian words). `message` must hold
   * PADDING_BYTES past `length`, which the padding overwrites.
   */
  digest(message: Uint8Array, length: number, out: Int32Array): void;
}

export function resumedSha256(prefix: Uint8Array): ResumedSha256 {
  if (prefix.length % BLOCK_BYTES !== 0) throw new RangeError('the prefix must be whole 64-byte blocks');
  const start = INITIAL.slice();
  // A plain Uint8Array, as every message is: compress sees one kind of array and V8 keeps it fast.
  const blocks = new Uint8Array(prefix);
  for (let at = 0; at < blocks.length; at += BLOCK_BYTES) compress(start, blocks, at);
  const prefixBits = prefix.length * 8;
  return {
    digest(message, length, out) {
      const end = Math.ceil((length + 9) / BLOCK_BYTES) * BLOCK_BYTES;
      message[length] = 0x80;
      message.fill(0, length + 1, end - 8);
      const bits = prefixBits + length * 8;
      const high = Math.floor(bits / 2 ** 32);
      message[end - 8] = high >>> 24;
      message[end - 7] = high >>> 16;
      message[end - 6] = high >>> 8;
      message[end - 5] = high;
      message[end - 4] = bits >>> 24;
      message[end - 3] = bits >>> 16;
      message[end - 2] = bits >>> 8;
      message[end - 1] = bits;
      out.set(start);
      for (let at = 0; at < end; at += BLOCK_BYTES) compress(out, message, at);
    },
  };
}

/** Writes a digest's words big-endian into `bytes` at `at`. */
export function wordsInto(words: Int32Array, bytes: Uint8Array, at: number): void {
  for (let i = 0; i < 8; i++) {
    const w = words[i]!;
    bytes[at + i * 4] = w >>> 24;
    bytes[at + i * 4 + 1] = w >>> 16;
    bytes[at + i * 4 + 2] = w >>> 8;
    bytes[at + i * 4 + 3] = w;
  }
}
