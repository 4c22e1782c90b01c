import { createHash, createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { personalHmac } from '../../../src/warehouse/personal-data/hmac.ts';

const SECRET = 'hmac-test-secret';
/** What any other HMAC-SHA-256 of the warehouse's key gives: `personal_hmac` in SQL and an analyst's own tools. */
const reference = (value: string) => createHmac('sha256', createHash('sha256').update(SECRET).digest()).update(value, 'utf8').digest('hex');

describe('the hash policy', () => {
  it('gives the standard HMAC-SHA-256 of every value: short, empty, non-ASCII, and longer than its buffers', () => {
    const hmac = personalHmac(SECRET);
    const values = ['a@example.com', '', 'Zoë Ñúñez 😀', 'x'.repeat(340), 'é'.repeat(400), 'y'.repeat(5_000), 'b@example.com'];
    for (const v of values) expect(hmac.of(v), v.slice(0, 20)).toBe(reference(v));
    // A short value after a long one: nothing of the long one is left in what is hashed.
    expect(hmac.of('c')).toBe(reference('c'));
  });
});
