import { availableParallelism } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import postgres from 'postgres';
import { parseRateLimit } from '../src/config.ts';
import { startSandbox, type RunningSandbox, type SandboxSize } from '../src/sandbox/index.ts';
import { Rng } from '../src/sandbox/rng.ts';
import { openWarehouse } from '../src/warehouse/connection.ts';
import { divergence } from '../test/support/convergence.ts';
import { spawnWfsync, waitFor, type Spawned } from '../test/support/processes.ts';
import { startRestartablePostgres, type RestartablePostgres } from '../test/support/restartable-postgres.ts';
import { startRestartableRedis } from '../test/support/restartable-redis.ts';

/**
 * A backfill (`wfsync sync --once`) through crashes and restarts, against a clean one of the same sandbox:
 *   kills:           the sync SIGKILLed KILLS times at random moments while it writes, started again each time;
 *   postgresRestart: the warehouse restarted mid-sync (a fast shutdown, as `pg_ctl -m fast restart`);
 *   redisRestart:    the limiter's Redis killed mid-sync and started again a few seconds later.
 * For each: rows missing, extra or stale against the sandbox's truth (goal 0), and the requests the sandbox
 * served against the clean run's (goal ≤ 1.05×), with the endpoints the extra requests went to. Prints one JSON
 * object.
 *
 *   SIZE=medium|small KILLS=10 RATE=100/1s SEED=7 SCENARIOS=kills,postgresRestart,redisRestart \
 *     node --import tsx bench/reliability.ts
 */

const SIZE = (process.env.SIZE ?? 'medium') as SandboxSize;
const KILLS = Number(process.env.KILLS ?? 10);
const RATE = process.env.RATE ?? '100/1s';
const SEED = Number(process.env.SEED ?? 7);
const SCENARIO_NAMES = ['kills', 'postgresRestart', 'redisRestart'] as const;
type ScenarioName = (typeof SCENARIO_NAMES)[number];
const SCENARIOS = (process.env.SCENARIOS ?? SCENARIO_NAMES.join(','))
  .split(',')
  .map((s) => s.trim())
  .filter(Boolean)
  .map((s) => {
    if (!(SCENARIO_NAMES as readonly string[]).includes(s))
      throw new Error(`SCENARIOS: unknown scenario "${s}"; known: ${SCENARIO_NAMES.join(', ')}`);
    return s as ScenarioName;
  });

interface Scenario {
  seconds: number;
  requests: number;
  requestsVsClean?: number;
  rateLimited: number;
  missing: number;
  extra: number;
  stale: number;
  exitCode: number | null;
  /** Requests the sandbox served, by endpoint. */
  byEndpoint: Record<string, number>;
  /** Requests beyond the clean run's, by endpoint (only those that differ). */
  overCleanByEndpoint?: Record<string, number>;
  [more: string]: unknown;
}

async function newDatabase(pg: RestartablePostgres, name: string): Promise<string> {
  const admin = postgres(pg.url.replace(/\/wfsync$/, '/postgres'), { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${name}`);
  await admin.end();
  return pg.url.replace(/\/wfsync$/, `/${name}`);
}

function settings(
  sandbox: RunningSandbox,
  databaseUrl: string,
  extra: Record<string, string> = {},
): Record<string, string> {
  return {
    DATABASE_URL: databaseUrl,
    WFS_BASE_URL: sandbox.url,
    WFS_API_KEY: sandbox.apiKey,
    WFS_RATE_LIMIT: RATE,
    WFS_RATE_LIMIT_MARGIN_MS: '100',
    WFS_FORM_IDS: sandbox.data.formIds().join(','),
    WFS_RUN_TYPE_IDS: sandbox.data.runTypeIds().join(','),
    LOG_LEVEL: 'error',
    ...extra,
  };
}

async function openRuns(databaseUrl: string, since: Date): Promise<number> {
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => {}, connect_timeout: 2 });
  try {
    const [r] = await sql<
      { n: number }[]
    >`select count(*)::int as n from workforce.sync_runs where finished_at is null and started_at >= ${since}`;
    return r!.n;
  } catch {
    return 0;
  } finally {
    await sql.end({ timeout: 1 });
  }
}

/** Waits until the sync has a stream running (it has started writing), or has ended. */
async function writing(sync: Spawned, databaseUrl: string, since: Date, streams = 1): Promise<void> {
  await waitFor(
    () => `a stream running: ${sync.output().slice(-1500)}`,
    async () => sync.proc.exitCode !== null || (await openRuns(databaseUrl, since)) >= streams,
    300_000,
    100,
  );
}

async function measure(
  name: string,
  pg: RestartablePostgres,
  drive: (
    sandbox: RunningSandbox,
    databaseUrl: string,
  ) => Promise<{ exitCode: number | null } & Record<string, unknown>>,
): Promise<Scenario> {
  const rate = parseRateLimit(RATE);
  const sandbox = await startSandbox({ port: 0, seed: SEED, size: SIZE, rateLimit: rate, log: undefined });
  try {
    const databaseUrl = await newDatabase(pg, name);
    const started = Date.now();
    const driven = await drive(sandbox, databaseUrl);
    const seconds = (Date.now() - started) / 1000;
    const wh = await openWarehouse({ databaseUrl, max: 2 });
    try {
      const d = Object.values(await divergence(wh, sandbox.data, 'default'));
      const stats = sandbox.stats();
      return {
        ...driven,
        seconds: Math.round(seconds * 10) / 10,
        requests: stats.requests,
        byEndpoint: stats.byEndpoint as Record<string, number>,
        rateLimited: stats.rateLimited,
        missing: d.reduce((n, x) => n + x.missing.length, 0),
        extra: d.reduce((n, x) => n + x.extra.length, 0),
        stale: d.reduce((n, x) => n + x.stale.length, 0),
      };
    } finally {
      await wh.close();
    }
  } finally {
    await sandbox.close();
  }
}

async function main(): Promise<void> {
  const pg = await startRestartablePostgres();
  // Seeded, so a run's kill moments can be had again.
  const rng = new Rng(SEED);
  const random = () => rng.next();
  try {
    const clean = await measure('clean', pg, async (sandbox, databaseUrl) => {
      const sync = spawnWfsync(['sync', '--once'], settings(sandbox, databaseUrl));
      return { exitCode: (await sync.exited()).code };
    });
    const cleanMs = clean.seconds * 1000;

    const kills = () =>
      measure('kills', pg, async (sandbox, databaseUrl) => {
        const env = settings(sandbox, databaseUrl);
        const at: number[] = [];
        for (let i = 0; i < KILLS; i++) {
          const since = new Date();
          const sync = spawnWfsync(['sync', '--once'], env);
          await writing(sync, databaseUrl, since);
          // Somewhere in the next tenth of a clean run: ten kills land before the backfill is done.
          const wait = Math.round(random() * cleanMs * 0.1);
          await Promise.race([sleep(wait), sync.exited()]);
          if (sync.proc.exitCode !== null) break;
          sync.proc.kill('SIGKILL');
          await sync.exited();
          at.push(Math.round((Date.now() - since.getTime()) / 100) / 10);
        }
        const last = spawnWfsync(['sync', '--once'], env);
        return { exitCode: (await last.exited()).code, kills: at.length, killedAfterSeconds: at };
      });

    /** A sync that loses a service it needs while it writes: `down` for `downMs`, then `up`. */
    const outageMidSync = async (
      env: Record<string, string>,
      databaseUrl: string,
      down: () => Promise<void>,
      downMs: number,
      up: () => Promise<void>,
    ) => {
      const since = new Date();
      const sync = spawnWfsync(['sync', '--once'], env);
      await writing(sync, databaseUrl, since, 3);
      await sleep(Math.round(cleanMs * (0.1 + 0.3 * random())));
      await down();
      await sleep(downMs);
      await up();
      const { code } = await sync.exited();
      return { exitCode: code, ...(code === 0 ? {} : { output: sync.output().slice(-1000) }) };
    };

    const postgresRestart = () =>
      measure('pgrestart', pg, (sandbox, databaseUrl) =>
        outageMidSync(
          settings(sandbox, databaseUrl),
          databaseUrl,
          () => pg.stop(),
          2000,
          () => pg.start(),
        ),
      );

    const redisRestart = async () => {
      const redis = await startRestartableRedis();
      try {
        return await measure('redisrestart', pg, (sandbox, databaseUrl) =>
          outageMidSync(
            settings(sandbox, databaseUrl, { REDIS_URL: redis.url }),
            databaseUrl,
            () => redis.kill(),
            5000,
            () => redis.start(),
          ),
        );
      } finally {
        await redis.destroy();
      }
    };

    const scenarios: Record<ScenarioName, () => Promise<Scenario>> = { kills, postgresRestart, redisRestart };
    const measured: Partial<Record<ScenarioName, Scenario>> = {};
    for (const name of SCENARIOS) measured[name] = await scenarios[name]();

    const overClean = (s: Scenario): Record<string, number> =>
      Object.fromEntries(
        Object.keys({ ...clean.byEndpoint, ...s.byEndpoint })
          .map((e) => [e, (s.byEndpoint[e] ?? 0) - (clean.byEndpoint[e] ?? 0)] as const)
          .filter(([, n]) => n !== 0),
      );
    const vsClean = (s: Scenario): Scenario => ({
      ...s,
      requestsVsClean: Math.round((s.requests / clean.requests) * 1000) / 1000,
      overCleanByEndpoint: overClean(s),
    });
    const result = {
      size: SIZE,
      rateLimit: RATE,
      seed: SEED,
      cpus: availableParallelism(),
      note: 'the sandbox and Postgres share these CPUs with the sync',
      clean,
      ...Object.fromEntries(Object.entries(measured).map(([name, m]) => [name, vsClean(m)])),
    };
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  } finally {
    await pg.destroy();
  }
}

await main();
