/**
 * A seeded pseudo-random generator (sfc32), so the same seed always yields the same sandbox.
 * Math.random is never used by the sandbox: determinism is what makes convergence tests repeatable.
 */
export class Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;
  private readonly seed: number;

  constructor(seed: number) {
    this.seed = seed >>> 0;
    this.a = 0x9e3779b9;
    this.b = 0x243f6a88;
    this.c = 0xb7e15162;
    this.d = seed >>> 0;
    for (let i = 0; i < 15; i++) this.next();
  }

  /** A float in [0, 1). */
  next(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return (t >>> 0) / 4294967296;
  }

  /** An integer in [min, max], both inclusive. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('pick from an empty list');
    return items[Math.floor(this.next() * items.length)] as T;
  }

  /** Up to `n` distinct items, in random order. */
  sample<T>(items: readonly T[], n: number): T[] {
    const copy = items.slice();
    const out: T[] = [];
    while (out.length < n && copy.length > 0) {
      const i = Math.floor(this.next() * copy.length);
      out.push(copy[i] as T);
      copy[i] = copy[copy.length - 1] as T;
      copy.pop();
    }
    return out;
  }

  /**
   * How many events happen when `expected` are expected: the integer part, plus one with the
   * probability of the fraction, so small datasets and short periods still see changes on average.
   */
  count(expected: number): number {
    const whole = Math.floor(expected);
    return whole + (this.chance(expected - whole) ? 1 : 0);
  }

  /** An independent generator derived from this seed and a label, so one domain's draws do not shift another's. */
  fork(label: string): Rng {
    let h = this.seed ^ 0x811c9dc5;
    for (let i = 0; i < label.length; i++) h = Math.imul(h ^ label.charCodeAt(i), 0x01000193);
    return new Rng(h >>> 0);
  }
}
