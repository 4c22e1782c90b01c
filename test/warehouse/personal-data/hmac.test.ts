import { createHash, createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { personalHmac, personHash, wrappedContentHash } from '../../../src/warehouse/personal-data/hmac.ts';

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

describe('hashes already stored', () => {
  /** Under one key, as the warehouse stored them before: a later release must give each byte for byte. */
  const KEY = 'pinned-personal-data-key';
  const STORED: [string, string][] = [
    ['a@example.com', '0aea8be66d3dbe0d2891d85ff8b7ac2df56f0ea63270261c5789a9161b099cb1'],
    ['', '1713b92190b922c543ef140ebdfcf5475d81e2007974d893ccd303e4a8181843'],
    ['Zoë Ñúñez 😀', '8fff35319f150a701d6958c655b40198440cc99c2c818433e06343dff61d3e2f'],
    ['x'.repeat(55), '035bbc5d9edd3e3a7400f1720088dabdd4740ec261d92f51f6ca059fef2f5fc7'],
    ['x'.repeat(56), '5150f9f1084c0440ec2212e72841e73a1d707a9f6ae02d03a9c325b114f8106b'],
    ['x'.repeat(64), '8eaa08912c5cfb92db806545a5c74054a016697a802424ed7f1768b62e66f056'],
    ['\uD800', '2d6b25d73bb76c31fd8f08e5bf3d0d813697115b6670e18c79d1d4c1126fef53'],
  ];

  it('are the same for the same values, and are what createHmac gives', () => {
    const hmac = personalHmac(KEY);
    const key = createHash('sha256').update(KEY).digest();
    for (const [value, stored] of STORED) {
      expect(hmac.of(value), value.slice(0, 20)).toBe(stored);
      expect(createHmac('sha256', key).update(value, 'utf8').digest('hex')).toBe(stored);
    }
  });

  it("are the same for an erased person's ids and a row's wrapped content hash", () => {
    const hmac = personalHmac(KEY);
    expect(personHash(hmac, 'service_id', 1042)).toBe(
      '57454d681cacb75e69fce255296205601b0f345fe7c93709de9984b33398d11b',
    );
    expect(personHash(hmac, 'employee_number', 'E-7')).toBe(
      '2d94068c88731ac602a7add50437777c853ac3b715c52cc175c7eb5a0e79dc0b',
    );
    expect(wrappedContentHash(hmac, '0123456789abcdef0123456789abcdef')).toBe('pa05696344a48be2f44b567105c00ddb');
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
