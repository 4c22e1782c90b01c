import { describe, expect, it } from 'vitest';
import { instantText } from '../../src/warehouse/instant-text.ts';

describe('the ISO text of an instant', () => {
  it('is what toISOString writes, across days, centuries, extended years and before 1970', () => {
    const edges = [
      0, -1, 1, 86_399_999, 86_400_000, -86_400_000, 951_782_400_000, 253_402_300_799_999, 253_402_300_800_000,
      -62_167_219_200_001, 8.64e15, -8.64e15,
    ];
    let seed = 7;
    const random = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31 - 0.5) * 2 * 8.64e15;
    const instants = [...edges, ...Array.from({ length: 20_000 }, () => Math.floor(random()))];
    for (const ms of instants) expect(instantText(ms), String(ms)).toBe(new Date(ms).toISOString());
  });

  it('is the same for an instant met again after many other days', () => {
    const ms = Date.parse('2025-03-09T07:30:00.250-05:00');
    const first = instantText(ms);
    for (let day = 0; day < 10_000; day++) instantText(day * 86_400_000);
    expect(instantText(ms)).toBe(first);
    expect(first).toBe('2025-03-09T12:30:00.250Z');
  });
});
