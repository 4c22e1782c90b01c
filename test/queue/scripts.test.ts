import { Redis } from 'ioredis';
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { DUE_KEY, FED_KEY, FEEDING_KEY, LATER_KEY, QUEUED_KEY, RUNS_KEY, runScript } from '../../src/queue/scripts.ts';
import { FRONTIER_KEY, TAKEN_KEY } from '../../src/queue/turns.ts';

/** The queue's Lua scripts (src/queue/lua/), each against the real Redis, on entries made by hand. */

let redis: Redis;
beforeAll(async () => {
  redis = new Redis(`${inject('redisUrl')}/15`, { maxRetriesPerRequest: null });
});
beforeEach(async () => {
  await redis.flushdb();
});
afterAll(async () => {
  await redis?.quit();
});

const QUEUE_KEYS = [DUE_KEY, RUNS_KEY, LATER_KEY, FED_KEY, QUEUED_KEY];

/** An entry as the queue stores it: `company.job` and its firing make the job id. */
function entry(member: string, firedAt: number, order: number, turnStartMs?: number) {
  const [company, job] = member.split('.');
  return {
    jobId: `${member}.${firedAt}`,
    order,
    data: { company, job, streams: [], firedAt: new Date(firedAt).toISOString(), turnStartMs, order },
  };
}

type Entry = ReturnType<typeof entry>;

/** queue-run.lua; `seen` is what the caller planned from ('*': nothing). */
function queueRun(
  e: Entry,
  o: { seen?: [string, string]; whenFed?: 'behind' | 'drop'; heldUntil?: number; now?: number; earlier?: Entry } = {},
) {
  const member = `${e.data.company}.${e.data.job}`;
  return runScript(redis, 'queueRun', QUEUE_KEYS, [
    member,
    ...(o.seen ?? ['*', '*']),
    o.whenFed ?? 'behind',
    JSON.stringify(e),
    e.jobId,
    e.order,
    o.heldUntil ?? '',
    o.now ?? 1_000,
    o.earlier ? JSON.stringify(o.earlier) : '',
  ]);
}

/** feed.lua as one feed, `token`; null while another feed is under way. */
async function feedAs(token: string, free: number, now = 1_000): Promise<Entry[] | null> {
  const out = (await runScript(redis, 'feed', [...QUEUE_KEYS, FEEDING_KEY], [free, now, token, 60_000])) as
    | string[]
    | null;
  return out === null ? null : out.map((s) => JSON.parse(s) as Entry);
}

const releaseFeed = (token: string) => runScript(redis, 'releaseFeed', [FEEDING_KEY], [token]);

/** feed.lua, then release-feed.lua: one feed whose runs reached BullMQ. */
async function feed(free: number, now = 1_000): Promise<Entry[]> {
  const given = await feedAs('feed', free, now);
  await releaseFeed('feed');
  return given!;
}

const finish = (member: string, jobId: string, now = 5_000) =>
  runScript(redis, 'finish', [DUE_KEY, RUNS_KEY, FED_KEY, QUEUED_KEY], [member, jobId, now]);

const runOf = async (member: string) => {
  const json = await redis.hget(RUNS_KEY, member);
  return json ? (JSON.parse(json) as Entry) : null;
};

describe('queue-run.lua', () => {
  it('queues a run once: a second firing coalesces with it, and the earlier turn wins', async () => {
    const first = entry('acme.shifts', 100, 60_000, 0);
    expect(await queueRun(first)).toBe(1);
    expect(await redis.zscore(DUE_KEY, 'acme.shifts')).toBe('60000');
    expect(await redis.zscore(QUEUED_KEY, 'acme.shifts')).toBe('1000');
    // A later firing whose turn ends later coalesces and changes nothing.
    const later = entry('acme.shifts', 200, 90_000, 30_000);
    expect(await queueRun(later, { earlier: { ...first, order: 90_000 } })).toBe(0);
    expect(await runOf('acme.shifts')).toEqual(first);
    // One whose turn ends earlier gives the queued run its turn: the queued run's id stays.
    const sooner = entry('acme.shifts', 300, 30_000, -30_000);
    const earlier = { ...first, order: 30_000, data: { ...first.data, turnStartMs: -30_000, order: 30_000 } };
    expect(await queueRun(sooner, { earlier })).toBe(0);
    expect(await runOf('acme.shifts')).toEqual(earlier);
    expect(await redis.zscore(DUE_KEY, 'acme.shifts')).toBe('30000');
    expect(await redis.hlen(RUNS_KEY)).toBe(1);
    // The same run again (another scheduler's firing of it) is no second run either.
    expect(await queueRun(first)).toBe(0);
    expect(await redis.zcard(DUE_KEY)).toBe(1);
  });

  it('holds a run until its time, outside the due runs, and counts its wait from then', async () => {
    expect(await queueRun(entry('acme.shifts', 100, 60_000), { heldUntil: 20_000 })).toBe(1);
    expect(await redis.zcard(DUE_KEY)).toBe(0);
    expect(await redis.zscore(LATER_KEY, 'acme.shifts')).toBe('20000');
    expect(await redis.zscore(QUEUED_KEY, 'acme.shifts')).toBe('20000');
  });

  it('holds a coalesced run no longer than the later firing would: a later hold leaves it, an earlier one or none moves it', async () => {
    const first = entry('acme.shifts', 100, 60_000);
    expect(await queueRun(first, { heldUntil: 40_000 })).toBe(1);
    expect(await queueRun(entry('acme.shifts', 200, 90_000), { heldUntil: 45_000 })).toBe(0);
    expect(await redis.zscore(LATER_KEY, 'acme.shifts')).toBe('40000');
    expect(await queueRun(entry('acme.shifts', 300, 90_000), { heldUntil: 25_000 })).toBe(0);
    expect(await redis.zscore(LATER_KEY, 'acme.shifts')).toBe('25000');
    expect(await redis.zscore(QUEUED_KEY, 'acme.shifts')).toBe('25000');
    // A firing that holds nothing (the box fell behind its schedule) makes it due at once, in the earlier turn it wins.
    const sooner = entry('acme.shifts', 400, 30_000);
    const earlier = { ...first, order: 30_000, data: { ...first.data, order: 30_000 } };
    expect(await queueRun(sooner, { now: 2_000, earlier })).toBe(0);
    expect(await redis.zcard(LATER_KEY)).toBe(0);
    expect(await redis.zscore(DUE_KEY, 'acme.shifts')).toBe('30000');
    expect(await redis.zscore(QUEUED_KEY, 'acme.shifts')).toBe('2000');
    expect((await feed(1, 2_000)).map((e) => e.jobId)).toEqual([first.jobId]);
  });

  it('queues a run whose company-job is given out to follow it, outside the due runs, or leaves it when asked to', async () => {
    await redis.hset(FED_KEY, 'acme.shifts', JSON.stringify(entry('acme.shifts', 100, 60_000)));
    const next = entry('acme.shifts', 200, 120_000);
    expect(await queueRun(next, { whenFed: 'drop', seen: ['', 'acme.shifts.100'] })).toBe(0);
    expect(await runOf('acme.shifts')).toBeNull();
    expect(await queueRun(next, { heldUntil: 50_000, seen: ['', 'acme.shifts.100'] })).toBe(2);
    expect(await runOf('acme.shifts')).toEqual(next);
    // Neither due nor held: it waits for the given-out run to end, and no wait is counted until then.
    expect(await redis.zcard(DUE_KEY)).toBe(0);
    expect(await redis.zcard(LATER_KEY)).toBe(0);
    expect(await redis.zcard(QUEUED_KEY)).toBe(0);
  });

  it('refuses a plan made from a state that changed since', async () => {
    const first = entry('acme.shifts', 100, 60_000);
    await queueRun(first);
    // Planned as if nothing were queued: refused, and nothing changes.
    expect(await queueRun(entry('acme.shifts', 200, 10_000), { seen: ['', ''] })).toBe(-1);
    // The queued run was given out after the plan was made from it.
    await feed(1);
    expect(await queueRun(entry('acme.shifts', 200, 10_000), { seen: [first.jobId, ''] })).toBe(-1);
    expect(await redis.hlen(RUNS_KEY)).toBe(0);
    expect(await queueRun(entry('acme.shifts', 200, 120_000), { seen: ['', first.jobId] })).toBe(2);
  });
});

describe('feed.lua', () => {
  it('gives out the lowest orders first, only as many as asked, and only runs whose hold is over', async () => {
    const backfillBase = 2 ** 42;
    await queueRun(entry('beta.shifts', 1, 2 * backfillBase + 10));
    await queueRun(entry('alpha.shifts', 1, 1 * backfillBase + 20));
    await queueRun(entry('gamma.shifts', 1, 90_000));
    await queueRun(entry('delta.shifts', 1, 30_000));
    await queueRun(entry('held.shifts', 1, 10_000), { heldUntil: 5_000 });
    const given = await feed(3, 4_999);
    expect(given.map((e) => e.data.company)).toEqual(['delta', 'gamma', 'alpha']);
    expect(await redis.hkeys(FED_KEY)).toEqual(
      expect.arrayContaining(['delta.shifts', 'gamma.shifts', 'alpha.shifts']),
    );
    expect(await redis.hexists(RUNS_KEY, 'delta.shifts')).toBe(0);
    expect(await redis.zscore(QUEUED_KEY, 'delta.shifts')).toBeNull();
    // Its time come, the held run goes first: its turn ends earliest.
    expect((await feed(5, 5_000)).map((e) => e.data.company)).toEqual(['held', 'beta']);
    expect(await feed(5, 6_000)).toEqual([]);
    expect(await redis.hlen(RUNS_KEY)).toBe(0);
    expect(await redis.zcard(QUEUED_KEY)).toBe(0);
  });

  it('keeps the order of backfills exact: by slot, then by when they were queued', async () => {
    const base = 2 ** 42;
    const queuedAt = 1_780_000_000_000;
    await queueRun(entry('a.second', 1, 3 * base + queuedAt));
    await queueRun(entry('b.first', 1, 2 * base + queuedAt + 1));
    await queueRun(entry('c.first', 1, 2 * base + queuedAt));
    await queueRun(entry('d.last', 1, 1000 * base + queuedAt));
    expect((await feed(4)).map((e) => `${e.data.company}.${e.data.job}`)).toEqual([
      'c.first',
      'b.first',
      'a.second',
      'd.last',
    ]);
  });
});

describe('feed.lua and release-feed.lua', () => {
  it('hold every other feed back from giving runs out until the feed that gave some out is released', async () => {
    for (const [i, member] of ['a.shifts', 'b.shifts', 'c.shifts'].entries()) await queueRun(entry(member, 1, i + 1));
    expect((await feedAs('first', 1))!.map((e) => e.data.company)).toEqual(['a']);
    // The second feed gives nothing out and takes nothing: its runs would reach BullMQ's wait list first.
    expect(await feedAs('second', 1)).toBeNull();
    expect(await redis.zcard(DUE_KEY)).toBe(2);
    // Only the first feed's token releases it.
    expect(await releaseFeed('second')).toBe(0);
    expect(await feedAs('second', 1)).toBeNull();
    expect(await releaseFeed('first')).toBe(1);
    expect((await feedAs('second', 1))!.map((e) => e.data.company)).toEqual(['b']);
    await releaseFeed('second');
  });

  it('hold nothing when a feed gives nothing out, and let a held feed go once its hold expires', async () => {
    expect(await feedAs('idle', 5)).toEqual([]);
    expect(await redis.exists(FEEDING_KEY)).toBe(0);
    await queueRun(entry('a.shifts', 1, 1));
    await queueRun(entry('b.shifts', 1, 2));
    await runScript(redis, 'feed', [...QUEUE_KEYS, FEEDING_KEY], [1, 1_000, 'died', 50]);
    expect(await feedAs('next', 1)).toBeNull();
    await new Promise((r) => setTimeout(r, 80));
    expect((await feedAs('next', 1))!.map((e) => e.data.company)).toEqual(['b']);
  });
});

describe('finish.lua', () => {
  it('clears a given-out run only if it still names that job, and makes the run behind it due', async () => {
    const first = entry('acme.shifts', 100, 60_000);
    await queueRun(first);
    await feed(1);
    const next = entry('acme.shifts', 200, 120_000);
    expect(await queueRun(next, { seen: ['', first.jobId] })).toBe(2);
    // Another job's end (an older run of the company's job) leaves it.
    expect(await finish('acme.shifts', 'acme.shifts.1')).toBe(0);
    expect(await redis.hexists(FED_KEY, 'acme.shifts')).toBe(1);
    expect(await feed(1)).toEqual([]);
    expect(await finish('acme.shifts', first.jobId, 7_000)).toBe(1);
    expect(await redis.hexists(FED_KEY, 'acme.shifts')).toBe(0);
    expect(await redis.zscore(DUE_KEY, 'acme.shifts')).toBe('120000');
    expect(await redis.zscore(QUEUED_KEY, 'acme.shifts')).toBe('7000');
    expect(await feed(1)).toEqual([next]);
    expect(await finish('acme.shifts', first.jobId)).toBe(0);
  });
});

describe('take-turn.lua', () => {
  it("records the company's turn and raises the frontier, never lowers it", async () => {
    const take = (field: string, startMs: number) =>
      runScript(redis, 'takeTurn', [TAKEN_KEY, FRONTIER_KEY], [field, startMs]);
    await take('acme.shifts', 5_000);
    await take('beta.shifts', 3_000);
    expect(await redis.hgetall(TAKEN_KEY)).toEqual({ 'acme.shifts': '5000', 'beta.shifts': '3000' });
    expect(await redis.get(FRONTIER_KEY)).toBe('5000');
    await take('beta.shifts', 8_000);
    expect(await redis.get(FRONTIER_KEY)).toBe('8000');
  });
});
