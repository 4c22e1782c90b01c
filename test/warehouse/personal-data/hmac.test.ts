import { createHash, createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { personalHmac, wrappedContentHash } from '../../../src/warehouse/personal-data/hmac.ts';

const SECRET = 'hmac-test-secret';
/** What any other HMAC-SHA-256 of the warehouse's key gives: `personal_hmac` in SQL and an analyst's own tools. */
const reference = (value: string) =>
  createHmac('sha256', createHash('sha256').update(SECRET).digest()).update(value, 'utf8').digest('hex');

describe('the hash policy', () => {
  it('gives the standard HMAC-SHA-256 of every value: short, empty, non-ASCII, and longer than its buffers', () => {
    const hmac = personalHmac(SECRET);
    const values = [
      'a@example.com',
      '',
      'Zoë Ñúñez 😀',
      'x'.repeat(340),
      'é'.repeat(400),
      'y'.repeat(5_000),
      'b@example.com',
    ];
    for (const v of values) expect(hmac.of(v), v.slice(0, 20)).toBe(reference(v));
    // A short value after a long one: nothing of the long one is left in what is hashed.
    expect(hmac.of('c')).toBe(reference('c'));
  });

  it('gives it at every length across the block boundaries, and for any character', () => {
    const hmac = personalHmac(`${SECRET}-lengths`);
    const key = createHash('sha256').update(`${SECRET}-lengths`).digest();
    const alphabet = ['a', 'Z', '0', '@', 'é', 'ß', '中', '😀', '\u{10FFFF}', '\uD800'];
    for (let length = 0; length <= 200; length++) {
      const ascii = 'v'.repeat(length);
      const mixed = Array.from({ length }, (_, i) => alphabet[(i * 7 + length) % alphabet.length]).join('');
      for (const v of [ascii, mixed])
        expect(hmac.of(v), `${length}`).toBe(createHmac('sha256', key).update(v, 'utf8').digest('hex'));
    }
  });
});

describe("a row's content hash under a policy", () => {
  it('is p and 31 hex digits of the SHA-256 of the inner pad, a label and the hash, as SQL computes it', () => {
    const hmac = personalHmac(SECRET);
    for (const hash of ['', '0123456789abcdef0123456789abcdef', 'é'.repeat(32), 'h'.repeat(120), 'é'.repeat(500)]) {
      const expected = createHash('sha256')
        .update(hmac.pads.inner)
        .update(`wfsync-content:${hash}`, 'utf8')
        .digest('hex');
      expect(wrappedContentHash(hmac, hash)).toBe(`p${expected.slice(0, 31)}`);
    }
    // Wrapped once: a wrapped hash stays as it is.
    expect(wrappedContentHash(hmac, wrappedContentHash(hmac, 'abc'))).toBe(wrappedContentHash(hmac, 'abc'));
  });
});

describe('content hashes wrapped one after another', () => {
  const reference = (secret: string, hash: string) =>
    `p${createHash('sha256').update(personalHmac(secret).pads.inner).update(`wfsync-content:${hash}`, 'utf8').digest('hex').slice(0, 31)}`;

  it('are each their own key and hash when keys share hashes', () => {
    const secrets = [`${SECRET}-a`, `${SECRET}-b`];
    const hashes = ['abcde0000000000000000000000000001', 'abcde0000000000000000000000000002', 'abcde', 'ABCDEzz'];
    for (let round = 0; round < 3; round++) {
      for (const secret of secrets) {
        for (const hash of hashes) {
          expect(wrappedContentHash(personalHmac(secret), hash), `${secret} ${hash}`).toBe(reference(secret, hash));
        }
      }
    }
  });
});
