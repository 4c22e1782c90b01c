import { afterEach, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import {
  DISPATCHES_AT_ONCE,
  startScheduler,
  type FiringOrder,
  type ScheduledRun,
  type Scheduler,
} from '../../src/queue/scheduler.ts';
import { syncJobId } from '../../src/queue/sync-queue.ts';
import { runOffsetMs, sharesOf, SPREAD_PER_COMPANY_MS } from '../../src/queue/spread.ts';
import { cronOf, defineJob } from '../../src/queue/job.ts';
import { loadConfig } from '../../src/config.ts';
import { jobs } from '../../jobs/index.ts';
import { App } from '../../src/app/index.ts';
import { startSandbox } from '../../src/sandbox/index.ts';
import { freshDatabase } from '../support/db.ts';

const silent = pino({ level: 'silent' });
const job = defineJob({ name: 'time-off', cron: '* * * * * *', streams: ['time-off-requests'], description: 'test' });
let schedulers: Scheduler[] = [];
afterEach(() => {
  for (const s of schedulers) s.stop();
  schedulers = [];
});

describe('scheduler', () => {
  it('fires each job on its cron for every company, with the scheduled time', async () => {
    const runs: ScheduledRun[] = [];
    schedulers.push(
      startScheduler({
        jobs: [job],
        companies: () => ['north', 'south'],
        timezone: 'UTC',
        cronOverrides: {},
        log: silent,
        dispatch: async (r) => void runs.push(r),
      }),
    );
    await new Promise((r) => setTimeout(r, 2200));
    expect(new Set(runs.map((r) => r.company))).toEqual(new Set(['north', 'south']));
    for (const r of runs) expect(r.firedAt.getMilliseconds()).toBe(0);
  });

  it('gives the same job id to the same run in two replicas, and ids BullMQ accepts', async () => {
    const a: string[] = [];
    const b: string[] = [];
    const opts = { jobs: [job], companies: () => ['north'], timezone: 'UTC', cronOverrides: {}, log: silent };
    schedulers.push(startScheduler({ ...opts, dispatch: async (r) => void a.push(syncJobId(r)) }));
    schedulers.push(startScheduler({ ...opts, dispatch: async (r) => void b.push(syncJobId(r)) }));
    await new Promise((r) => setTimeout(r, 2200));
    expect(a.length).toBeGreaterThan(0);
    expect(new Set(a)).toEqual(new Set(b));
    for (const id of a) expect(id).not.toContain(':');
  });

  it("queues a firing's companies several at once, each once, while a dispatch waits on Redis", async () => {
    const many = Array.from({ length: 100 }, (_, i) => `c${i}`);
    const dispatched: string[] = [];
    let inFlight = 0;
    let most = 0;
    const dispatch = async (r: ScheduledRun) => {
      most = Math.max(most, ++inFlight);
      await new Promise((done) => setTimeout(done, 5));
      inFlight--;
      dispatched.push(`${r.firedAt.getTime()}/${r.company}`);
    };
    const once = defineJob({
      name: 'time-off',
      cron: '*/2 * * * * *',
      streams: ['time-off-requests'],
      description: 'test',
    });
    schedulers.push(
      startScheduler({
        jobs: [once],
        companies: () => many,
        timezone: 'UTC',
        cronOverrides: {},
        log: silent,
        dispatch,
      }),
    );
    await new Promise((r) => setTimeout(r, 2500));
    const firedAt = dispatched[0]!.split('/')[0];
    const first = dispatched.filter((d) => d.startsWith(`${firedAt}/`)).map((d) => d.split('/')[1]);
    expect(new Set(first)).toEqual(new Set(many));
    expect(first).toHaveLength(many.length);
    expect(most).toBeGreaterThan(1);
    expect(most).toBeLessThanOrEqual(DISPATCHES_AT_ONCE);
  });

  it('takes a cron override from WFS_CRON_<JOB>', () => {
    const config = loadConfig({ WFS_CRON_TIME_OFF: '0 5 * * *' });
    expect(cronOf(job, config.cron)).toBe('0 5 * * *');
    expect(cronOf(job, {})).toBe('* * * * * *');
  });

  it('sends with each run how old a stream the job reads only as a dependency may be: its own job’s interval', async () => {
    const runs: ScheduledRun[] = [];
    const cronOverrides = { individuals: '*/20 * * * * *', credentials: '* * * * * *' };
    const pair = jobs.filter((j) => j.name === 'credentials' || j.name === 'individuals');
    schedulers.push(
      startScheduler({
        jobs: pair,
        companies: () => ['north'],
        timezone: 'UTC',
        cronOverrides,
        log: silent,
        dispatch: async (r) => void runs.push(r),
      }),
    );
    await new Promise((r) => setTimeout(r, 1200));
    const sent = runs.find((r) => r.job.name === 'credentials');
    expect(sent?.dependencyBoundsMs).toEqual({ individuals: 20_000 });
    // With the default crons: the individuals job's half hour.
    const byDefault: ScheduledRun[] = [];
    schedulers.push(
      startScheduler({
        jobs: pair,
        companies: () => ['north'],
        timezone: 'UTC',
        cronOverrides: { credentials: '* * * * * *' },
        log: silent,
        dispatch: async (r) => void byDefault.push(r),
      }),
    );
    await new Promise((r) => setTimeout(r, 1200));
    expect(byDefault.find((r) => r.job.name === 'credentials')?.dependencyBoundsMs).toEqual({
      individuals: 30 * 60_000,
    });
  });

  it("spreads the companies' runs of a job after its firing: one company's always at the same share, within half an interval", async () => {
    const many = Array.from({ length: 1000 }, (_, i) => `c${i}`);
    const runs: ScheduledRun[] = [];
    schedulers.push(
      startScheduler({
        jobs: [job],
        companies: () => many,
        timezone: 'UTC',
        cronOverrides: {},
        log: silent,
        dispatch: async (r) => void runs.push(r),
      }),
    );
    await new Promise((r) => setTimeout(r, 2200));
    const firings = new Set(runs.map((r) => r.firedAt.getTime()));
    expect(firings.size).toBeGreaterThanOrEqual(2);
    const byCompany = new Map<string, Set<number>>();
    for (const r of runs) byCompany.set(r.company, (byCompany.get(r.company) ?? new Set()).add(r.startAfterMs!));
    // A one-second cron: within half a second, the same share at every firing, spread across it.
    expect([...byCompany.values()].every((offsets) => offsets.size === 1)).toBe(true);
    const offsets = runs.map((r) => r.startAfterMs!);
    expect(Math.max(...offsets)).toBeLessThan(500);
    expect(Math.max(...offsets)).toBeGreaterThan(450);
    expect(Math.min(...offsets)).toBeLessThan(50);

    // The default ten minutes of shift assignments: a thousand companies over five minutes, half the interval;
    // a hundred over fifty seconds; two within a second.
    const tenMinutes = 600_000;
    const spread = (n: number) =>
      Math.max(
        ...[...sharesOf(many.slice(0, n), 'shift-assignments').values()].map((share) =>
          runOffsetMs(share, tenMinutes, n),
        ),
      );
    expect(spread(1000)).toBeLessThan(tenMinutes / 2);
    expect(spread(1000)).toBeGreaterThan(0.95 * (tenMinutes / 2));
    expect(spread(100)).toBeLessThan(100 * SPREAD_PER_COMPANY_MS);
    expect(spread(100)).toBeGreaterThan(0.9 * 100 * SPREAD_PER_COMPANY_MS);
    expect(spread(2)).toBeLessThan(2 * SPREAD_PER_COMPANY_MS);
  });

  it("dispatches a firing's companies in the order of their shares", async () => {
    const many = Array.from({ length: 200 }, (_, i) => `c${i}`);
    const runs: ScheduledRun[] = [];
    schedulers.push(
      startScheduler({
        jobs: [job],
        companies: () => many,
        timezone: 'UTC',
        cronOverrides: {},
        log: silent,
        dispatch: async (r) => void runs.push(r),
      }),
    );
    await new Promise((r) => setTimeout(r, 1200));
    const firing = runs.filter((r) => r.firedAt.getTime() === runs[0]!.firedAt.getTime());
    expect(firing).toHaveLength(200);
    expect(firing.map((r) => r.share)).toEqual([...firing.map((r) => r.share!)].sort((a, b) => a - b));
    expect(firing.map((r) => r.company)).not.toEqual(many);
  });

  it("dispatches a firing in the order of its companies' turns when given one, and in share order when it cannot be read", async () => {
    const many = Array.from({ length: 50 }, (_, i) => `c${i}`);
    const firingOf = async (order: FiringOrder) => {
      const runs: ScheduledRun[] = [];
      const scheduler = startScheduler({
        jobs: [job],
        companies: () => many,
        timezone: 'UTC',
        cronOverrides: {},
        log: silent,
        order,
        dispatch: async (r) => void runs.push(r),
      });
      schedulers.push(scheduler);
      await new Promise((r) => setTimeout(r, 1200));
      scheduler.stop();
      return runs.filter((r) => r.firedAt.getTime() === runs[0]!.firedAt.getTime()).map((r) => r.share!);
    };
    const reversed = await firingOf(async (_job, _interval, shares) => [...shares.keys()].reverse());
    expect(reversed).toHaveLength(50);
    expect(reversed).toEqual([...reversed].sort((a, b) => b - a));
    const unread = await firingOf(async () => {
      throw new Error('Redis is away');
    });
    expect(unread).toEqual([...reversed].reverse());
  });

  it("places a job's companies evenly, each at its own share, and one joining moves the others by less than a place", () => {
    const many = Array.from({ length: 1000 }, (_, i) => `c${i}`);
    const shares = sharesOf(many, 'shift-assignments');
    // Thirty seconds shared by a thousand companies: thirty milliseconds between any two.
    const offsets = [...shares.values()].map((share) => Math.floor(share * 30_000)).sort((a, b) => a - b);
    expect(new Set(offsets).size).toBe(1000);
    expect(Math.min(...offsets.slice(1).map((o, i) => o - offsets[i]!))).toBeGreaterThanOrEqual(29);
    // The same fleet in another order gets the same shares; each job spreads it in its own order.
    expect(sharesOf([...many].reverse(), 'shift-assignments')).toEqual(shares);
    expect(sharesOf(many, 'credentials').get('c0')).not.toBe(shares.get('c0'));
    const grown = sharesOf([...many, 'newcomer'], 'shift-assignments');
    for (const c of many) expect(Math.abs(grown.get(c)! - shares.get(c)!)).toBeLessThan(1 / 1000);
  });
});

describe("a process's scheduler and the streams its companies turned off", () => {
  it('does not schedule a job for a company whose streams of it are all off, and does again once one is on', async () => {
    const sandbox = await startSandbox({ port: 0, seed: 4, size: 'tiny', rateLimit: null });
    const each = ['run-log-forms', 'forms'];
    const config = loadConfig({
      DATABASE_URL: await freshDatabase(),
      WFS_COMPANIES: JSON.stringify(
        ['north', 'south'].map((key) => ({ key, apiKey: sandbox.apiKey, baseUrl: sandbox.url })),
      ),
      WFS_COMPANIES_REFRESH_SECONDS: '0.2',
      WFS_SECRET_KEY: 'scheduler-test-secret-key',
      // Two jobs fire every second; the others not while the test runs.
      ...Object.fromEntries(
        jobs.map((j) => [
          `WFS_CRON_${j.name.toUpperCase().replace(/-/g, '_')}`,
          each.includes(j.name) ? '* * * * * *' : '0 0 1 1 *',
        ]),
      ),
    });
    const app = new App(config, silent, { live: false, write: () => {}, setLive: () => {} });
    try {
      let runs: ScheduledRun[] = [];
      await app.scheduler(async (r) => void runs.push(r));
      const admin = await app.companyAdmin();
      /** The companies each job was fired for over a little more than two seconds, once the table was read again. */
      const fired = async () => {
        await new Promise((r) => setTimeout(r, 500));
        runs = [];
        await new Promise((r) => setTimeout(r, 2200));
        return Object.fromEntries(
          each.map((j) => [j, [...new Set(runs.filter((r) => r.job.name === j).map((r) => r.company))].sort()]),
        );
      };
      expect(await fired()).toEqual({ 'run-log-forms': ['north', 'south'], forms: ['north', 'south'] });

      await admin.streams('cli:test', 'north', { off: ['run-log-forms', 'run-log-form-responses'] });
      expect(await fired()).toEqual({ 'run-log-forms': ['south'], forms: ['north', 'south'] });

      // One of the job's streams on again: the job runs for it, and its run skips the other.
      await admin.streams('cli:test', 'north', { on: ['run-log-forms'] });
      expect(await fired()).toEqual({ 'run-log-forms': ['north', 'south'], forms: ['north', 'south'] });
    } finally {
      await app.stop();
      await sandbox.close();
    }
  }, 60_000);
});
