import { pino } from 'pino';
import postgres from 'postgres';
import { afterAll, describe, expect, it } from 'vitest';
import { App } from '../../src/app/index.ts';
import { loadConfig } from '../../src/config.ts';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.ts';
import { spawnWfsync, waitFor, type Spawned } from '../support/processes.ts';
import { startRestartablePostgres, type RestartablePostgres } from '../support/restartable-postgres.ts';
import { startRestartableRedis, type RestartableRedis } from '../support/restartable-redis.ts';
import { sandboxSettings } from '../support/sandbox-settings.ts';

describe('stopping the app', () => {
  it('a step that never stops does not hold back the next one, and the log names it', async () => {
    const lines: { msg?: string; step?: string }[] = [];
    const log = pino(
      { level: 'warn' },
      { write: (line: string) => void lines.push(JSON.parse(line) as { msg?: string; step?: string }) },
    );
    const app = new App(loadConfig({}), log);
    const stopped: string[] = [];
    app.onStop('warehouse', () => void stopped.push('warehouse'));
    app.onStop('stuck', () => new Promise<void>(() => {}));
    const started = Date.now();
    await app.stop({ deadline: started + 1_000 });
    expect(stopped).toEqual(['warehouse']);
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(lines).toContainEqual(
      expect.objectContaining({ step: 'stuck', msg: 'a step did not stop in time; going on' }),
    );
    expect(app.stillRunning()).toEqual(['stuck']);
  });
});

/**
 * Processes stopped by SIGTERM while what they hold goes down at the same moment, as on a host that shuts down
 * (`docker compose down`, a node drain). Each must exit within its shutdown bound, and leave no run open.
 */
const BOUND_MS = 10_000;
/** A process is told to stop and exits: the time the kernel and Node take around the bound. */
const EXIT_MARGIN_MS = 1_500;
const SECRET = 'stop-test-secret-key-0123456789';

type Kind = 'start' | 'worker' | 'scheduler' | 'serve' | 'sync';
const ARGS: Record<Kind, string[]> = {
  start: ['start'],
  worker: ['worker'],
  scheduler: ['scheduler'],
  serve: ['serve'],
  sync: ['sync', '--once'],
};
/** The kinds that run streams, and hold runs open while they do. */
const RUNNING: readonly Kind[] = ['start', 'worker', 'sync'];
/**
 * What each kind says once it has started (sync --once starts reading at once): a process still starting when the
 * warehouse goes away fails its start-up (exit 1, one line), which is not what these tests are about.
 */
const STARTED: Record<Kind, string | undefined> = {
  start: 'scheduled incremental syncs',
  worker: '"msg":"worker started"',
  scheduler: 'scheduled incremental syncs',
  serve: 'status at ',
  sync: undefined,
};

interface Scene {
  redis: RestartableRedis;
  pg: RestartablePostgres;
  sandbox: RunningSandbox;
  procs: Map<Kind, Spawned>;
  openRuns(): Promise<{ id: string; stream: string; pid: string }[]>;
  close(): Promise<void>;
}

const scenes: Scene[] = [];
afterAll(async () => {
  await Promise.allSettled(scenes.map((s) => s.close()));
});

/** Its own Redis, Postgres and service, and the processes of `kinds` on them, each reading streams when asked to. */
async function scene(kinds: readonly Kind[], extra: Record<string, string> = {}): Promise<Scene> {
  const [redis, pg, sandbox] = await Promise.all([
    startRestartableRedis(),
    startRestartablePostgres(),
    startSandbox({ port: 0, seed: 48, size: 'small', rateLimit: { limit: 100, periodMs: 1000 } }),
  ]);
  const sql = postgres(pg.url, { max: 1, onnotice: () => {} });
  const env = {
    ...sandboxSettings(sandbox),
    DATABASE_URL: pg.url,
    REDIS_URL: redis.url,
    WFS_RATE_LIMIT: '100/1s',
    WFS_HTTP_PORT: '0',
    WFS_SECRET_KEY: SECRET,
    WFS_JOB_LOCK_MS: '3000',
    WFS_SHUTDOWN_MS: String(BOUND_MS),
    LOG_LEVEL: 'info',
    ...extra,
  };
  // One process migrates first: processes that start together would race for the migration lock.
  const migrate = spawnWfsync(['migrate'], env);
  expect((await migrate.exited()).code, migrate.output()).toBe(0);
  const procs = new Map(kinds.map((k) => [k, spawnWfsync(ARGS[k], env)] as const));
  const s: Scene = {
    redis,
    pg,
    sandbox,
    procs,
    openRuns: async () =>
      sql<{ id: string; stream: string; pid: string }[]>`
        select id, stream, details->'owner'->>'pid' as pid from workforce.sync_runs where finished_at is null order by id`.then(
        (rows) => [...rows],
      ),
    close: async () => {
      for (const p of procs.values())
        if (p.proc.exitCode === null && p.proc.signalCode === null) p.proc.kill('SIGKILL');
      await sql.end({ timeout: 1 }).catch(() => undefined);
      await Promise.allSettled([redis.destroy(), pg.destroy(), sandbox.close()]);
    },
  };
  scenes.push(s);
  // Every process has started, and every process that reads streams is reading one.
  const readers = kinds.filter((k) => RUNNING.includes(k)).map((k) => String(procs.get(k)!.proc.pid));
  await waitFor(
    () =>
      `every process started, and runs open in ${kinds.join(', ')}; said:\n${[...procs].map(([k, p]) => `--- ${k}\n${p.output().slice(-1500)}`).join('\n')}`,
    async () => {
      if (kinds.some((k) => STARTED[k] !== undefined && !procs.get(k)!.output().includes(STARTED[k]))) return false;
      const pids = new Set((await s.openRuns().catch(() => [])).map((r) => r.pid));
      return readers.every((pid) => pids.has(pid));
    },
    90_000,
    250,
  );
  return s;
}

/**
 * SIGTERM to every process of the scene at once (`twice`: again 50 ms later, as a terminal's Ctrl-C under npm
 * arrives); how each ended and how long after the signal.
 */
async function stopAll(
  s: Scene,
  alsoNow: () => Promise<void>,
  twice = false,
): Promise<Map<Kind, { code: number | null; ms: number; output: string }>> {
  const started = Date.now();
  const exits = [...s.procs].map(async ([kind, p]) => {
    // Its output is whole once its pipes closed, after it exited.
    const closed = new Promise((resolve) => p.proc.once('close', resolve));
    const { code } = await p.exited();
    const ms = Date.now() - started;
    await closed;
    return [kind, { code, ms, output: p.output() }] as const;
  });
  for (const p of s.procs.values()) p.proc.kill('SIGTERM');
  // The copy a terminal and npm deliver comes milliseconds after the first: before a process can have stopped.
  if (twice)
    setTimeout(() => {
      for (const p of s.procs.values()) p.proc.kill('SIGTERM');
    }, 5);
  await alsoNow();
  return new Map(await Promise.all(exits));
}

/** The line a forced end says what was still running in. */
const FORCED = /"level":60,[^\n]*"stillRunning":\[[^\n]*"msg":"[^"\n]*: exiting with [^"\n]+ still running"/;

type Ended = Map<Kind, { code: number | null; ms: number; output: string }>;

/** A process stopped in order within its bound: exit 0, `stopped`, and no line of a forced end. */
function expectOrderly(kind: Kind, e: { code: number | null; ms: number; output: string }): void {
  const said = `${kind} said:\n${e.output.slice(-4000)}`;
  expect(e.ms, said).toBeLessThan(BOUND_MS + EXIT_MARGIN_MS);
  expect(e.code, said).toBe(0);
  expect(e.output, said).toContain('"msg":"stopped"');
  expect(e.output, said).not.toMatch(FORCED);
}

/**
 * With the warehouse up, every process stops in order and records the end of each run it had open itself: none
 * is left for a next process to close.
 */
async function expectOrderlyStops(s: Scene, ended: Ended): Promise<void> {
  for (const [kind, e] of ended) expectOrderly(kind, e);
  expect(await s.openRuns()).toEqual([]);
}

/**
 * With the warehouse restarting or gone, a process that runs streams may be cut off at its bound (1, with one line
 * naming what was still running): the end of a run waits for the warehouse. One that exited 0 recorded its runs'
 * ends itself; the next process to start (`status`) closes those a cut-off process left open, and none is left.
 */
async function expectStopsWithinBound(s: Scene, ended: Ended): Promise<void> {
  const left = new Set((await s.openRuns()).map((r) => r.pid));
  for (const [kind, e] of ended) {
    if (ORDERLY.includes(kind) || e.code === 0) {
      expectOrderly(kind, e);
      expect(
        left.has(String(s.procs.get(kind)!.proc.pid)),
        `${kind} exited 0 and left a run open; said:\n${e.output.slice(-4000)}`,
      ).toBe(false);
      continue;
    }
    const said = `${kind} said:\n${e.output.slice(-4000)}`;
    expect(e.ms, said).toBeLessThan(BOUND_MS + EXIT_MARGIN_MS);
    expect(e.code, said).toBe(1);
    expect(e.output.match(new RegExp(FORCED, 'g')), said).toHaveLength(1);
  }
  const next = spawnWfsync(['status'], { DATABASE_URL: s.pg.url, WFS_SECRET_KEY: SECRET, LOG_LEVEL: 'warn' });
  expect((await next.exited()).code, next.output()).not.toBeNull();
  expect(await s.openRuns()).toEqual([]);
}

/** The processes that stop in order whatever the warehouse does: those that run no stream. */
const ORDERLY: readonly Kind[] = ['scheduler', 'serve'];
/** Every kind: the stream runners, and the scheduler and the ops server beside them on the same Redis. */
const EVERY: readonly Kind[] = ['start', 'worker', 'scheduler', 'serve', 'sync'];

describe('a process told to stop while what it holds goes down', () => {
  it("Redis killed: start, worker, scheduler, serve and sync --once stop in order, each recording its runs' end", async () => {
    const s = await scene(EVERY);
    await expectOrderlyStops(s, await stopAll(s, () => s.redis.kill()));
  }, 180_000);

  it("Redis shutting down: start, worker, scheduler, serve and sync --once stop in order, each recording its runs' end", async () => {
    const s = await scene(EVERY);
    await expectOrderlyStops(s, await stopAll(s, () => s.redis.shutDown()));
  }, 180_000);

  it('Postgres restarting: start and sync --once exit within their bound, and no run is left open', async () => {
    const s = await scene(['start', 'sync']);
    const ended = await stopAll(s, async () => {
      await s.pg.stop();
      await s.pg.start();
    });
    await expectStopsWithinBound(s, ended);
  }, 180_000);

  it("the service gone, and the signal arriving twice at once: start, worker and sync --once stop in order, each recording its runs' end", async () => {
    const s = await scene(['start', 'worker', 'sync']);
    await expectOrderlyStops(s, await stopAll(s, () => s.sandbox.close(), true));
  }, 180_000);

  it('Postgres gone: a second SIGTERM ends sync --once at once; start is cut off at its bound; the next process closes their runs', async () => {
    const s = await scene(['start', 'sync']);
    const [start, sync] = [s.procs.get('start')!, s.procs.get('sync')!];
    const closed = [start, sync].map((p) => new Promise((resolve) => p.proc.once('close', resolve)));
    await s.pg.stop();
    const started = Date.now();
    start.proc.kill('SIGTERM');
    sync.proc.kill('SIGTERM');
    // Their runs wait for the warehouse to record their end: both are still stopping a second and a half later.
    await new Promise((r) => setTimeout(r, 1_500));
    sync.proc.kill('SIGTERM');
    const second = await sync.exited();
    const secondMs = Date.now() - started;
    const bound = await start.exited();
    const boundMs = Date.now() - started;
    await Promise.all(closed);
    expect(second.code, sync.output()).toBe(143);
    expect(secondMs, sync.output()).toBeLessThan(1_500 + EXIT_MARGIN_MS);
    expect(sync.output().match(new RegExp(FORCED, 'g')), sync.output()).toHaveLength(1);
    expect(sync.output()).toMatch(/SIGTERM again: exiting with [^"]*environment[^"]* still running/);
    expect(bound.code, start.output()).toBe(1);
    expect(boundMs, start.output()).toBeLessThan(BOUND_MS + EXIT_MARGIN_MS);
    expect(start.output().match(new RegExp(FORCED, 'g')), start.output()).toHaveLength(1);
    expect(start.output()).toMatch(/exiting with [^"]*environment[^"]* still running/);
    await s.pg.start();
    expect((await s.openRuns()).length).toBeGreaterThan(0);
    const next = spawnWfsync(['status'], { DATABASE_URL: s.pg.url, WFS_SECRET_KEY: SECRET, LOG_LEVEL: 'warn' });
    expect((await next.exited()).code, next.output()).not.toBeNull();
    expect(await s.openRuns()).toEqual([]);
  }, 180_000);

  it('all at once: start, worker, scheduler, serve and sync --once exit within their bound, and no run is left open', async () => {
    const s = await scene(EVERY);
    const ended = await stopAll(s, () =>
      Promise.all([s.redis.shutDown(), s.sandbox.close(), s.pg.stop().then(() => s.pg.start())]).then(() => undefined),
    );
    await expectStopsWithinBound(s, ended);
  }, 180_000);
});
