import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { jobs } from '../../jobs/index.ts';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.ts';
import { parseKeySpec } from '../../src/sandbox/keys.ts';
import { freshDatabase } from '../support/db.ts';
import { runWfsync, spawnWfsync, waitFor, WFSYNC, type Spawned } from '../support/processes.ts';

/**
 * `wfsync companies` against a running `wfsync start` (Redis, the sandbox over HTTP, a compressed budget): a
 * company added is synced within a minute, a paused one runs no more, a rotated key is used with no request
 * refused once the old key is revoked, a removed and purged one leaves no row, and no clear key is anywhere. A
 * stream turned off is not read, its rows purged are only that company's, and one others read goes off with them.
 */

const REDIS_DB = 9;
const NORTH_KEY = 'north-key-in-the-environment-7Kq';
const SOUTH_KEY = 'south-first-key-never-in-clear-3Wx';
const SOUTH_NEW_KEY = 'south-second-key-never-in-clear-8Pz';
const WRONG_KEY = 'a-key-the-service-does-not-know';

const cronSetting = (job: string) => `WFS_CRON_${job.toUpperCase().replace(/-/g, '_')}`;

let sandbox: RunningSandbox;
let sql: postgres.Sql;
let redis: Redis;
let dataDir: string;
let start: Spawned | undefined;
let env: Record<string, string>;

beforeAll(async () => {
  sandbox = await startSandbox({
    port: 0,
    seed: 5,
    size: 'tiny',
    rateLimit: { limit: 100, periodMs: 1000 },
    keys: [NORTH_KEY, SOUTH_KEY, SOUTH_NEW_KEY].map(parseKeySpec),
  });
  const databaseUrl = await freshDatabase();
  sql = postgres(databaseUrl, { max: 2, onnotice: () => {} });
  const redisUrl = `${inject('redisUrl')}/${REDIS_DB}`;
  redis = new Redis(redisUrl);
  await redis.flushdb();
  dataDir = mkdtempSync(join(tmpdir(), 'wfsync-companies-'));
  // Only reference-lists fires on its own, every few seconds: what a paused or rotated company would run next.
  const crons = Object.fromEntries(
    jobs.map((j) => [cronSetting(j.name), j.name === 'reference-lists' ? '*/3 * * * * *' : '0 0 1 1 *']),
  );
  env = {
    ...crons,
    DATABASE_URL: databaseUrl,
    REDIS_URL: redisUrl,
    WFS_COMPANIES: JSON.stringify([
      {
        key: 'north',
        apiKey: NORTH_KEY,
        baseUrl: sandbox.url,
        formIds: sandbox.data.formIds(),
        runTypeIds: sandbox.data.runTypeIds(),
      },
    ]),
    WFS_RATE_LIMIT: '100/1s',
    WFS_SECRET_KEY: 'companies-test-secret-key',
    WFS_COMPANIES_REFRESH_SECONDS: '1',
    WFS_HTTP_PORT: '0',
    WFS_DATA_DIR: dataDir,
    LOG_FORMAT: 'json',
    LOG_LEVEL: 'info',
  };
});

afterAll(async () => {
  if (start && start.proc.exitCode === null) {
    start.proc.kill('SIGTERM');
    await start.exited();
  }
  await sql?.end();
  redis?.disconnect();
  await sandbox?.close();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

/** `wfsync companies ...` with `stdin` on its standard input; its exit code and output. */
function companies(args: string[], stdin = '', settings = env): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const proc = spawn(process.execPath, [WFSYNC, 'companies', ...args], {
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/root', ...settings },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let out = '';
    proc.stdout.on('data', (d: Buffer) => (out += d.toString()));
    proc.stderr.on('data', (d: Buffer) => (out += d.toString()));
    proc.once('exit', (code) => resolve({ code, out }));
    proc.stdin.end(stdin);
  });
}

const count = async (table: string, company: string, db = sql) =>
  (await db<{ n: number }[]>`select count(*)::int as n from workforce.${db(table)} where company_key = ${company}`)[0]!
    .n;

/** Every text the warehouse holds: each row of each table as JSON. */
async function warehouseText(): Promise<string> {
  const tables = await sql<
    { name: string }[]
  >`select table_name as name from information_schema.tables where table_schema = 'workforce' and table_type = 'BASE TABLE'`;
  const parts = await Promise.all(
    tables.map(async ({ name }) => JSON.stringify(await sql`select * from workforce.${sql(name)}`)),
  );
  return parts.join('\n');
}

/** Every key and value of the Redis database. */
async function redisText(): Promise<string> {
  const keys = await redis.keys('*');
  const parts: string[] = [...keys];
  for (const key of keys) {
    const type = await redis.type(key);
    if (type === 'string') parts.push(String(await redis.getBuffer(key)));
    else if (type === 'hash') parts.push(JSON.stringify(await redis.hgetall(key)));
    else if (type === 'list') parts.push(JSON.stringify(await redis.lrange(key, 0, -1)));
    else if (type === 'set') parts.push(JSON.stringify(await redis.smembers(key)));
    else if (type === 'zset') parts.push(JSON.stringify(await redis.zrange(key, 0, -1)));
    else if (type === 'stream') parts.push(JSON.stringify(await redis.xrange(key, '-', '+')));
  }
  return parts.join('\n');
}

const revoked = async () =>
  ((await (await fetch(`${sandbox.url}/_sandbox/keys/revoked`)).json()) as { revoked: Record<string, number> }).revoked;

describe('wfsync companies while wfsync start runs', () => {
  it('adds, pauses, rotates and purges a company without a restart, and no key is ever in clear', async () => {
    start = spawnWfsync(['start'], env);
    await waitFor(
      () => `start to be up; output so far:\n${start!.output().slice(-3000)}`,
      async () => start!.output().includes('scheduled incremental syncs'),
      60_000,
    );
    // The environment's company is mirrored into the table, managed there.
    const listed = await companies(['list', '--json']);
    expect(listed.code, listed.out).toBe(0);
    expect(JSON.parse(listed.out)).toEqual([
      expect.objectContaining({ key: 'north', managedBy: 'environment', paused: false }),
    ]);
    const refused = await companies(['pause', 'north']);
    expect(refused.code).toBe(1);
    expect(refused.out.trim()).toBe(
      'wfsync: company north is managed by the environment (WFS_COMPANIES or WFS_API_KEY): pause it there',
    );

    // A wrong key is refused with one line, and nothing is added.
    const wrong = await companies(['add', 'west', '--base-url', sandbox.url, '--api-key-stdin'], `${WRONG_KEY}\n`);
    expect(wrong.code).toBe(1);
    expect(wrong.out.trim().split('\n')).toEqual([
      `wfsync: company west: the service at ${sandbox.url} refused the API key (401)`,
    ]);
    const unreachable = await companies(
      ['add', 'west', '--base-url', 'http://127.0.0.1:1', '--api-key-stdin'],
      SOUTH_KEY,
    );
    expect(unreachable.code).toBe(1);
    expect(unreachable.out.trim()).toMatch(
      /^wfsync: company west: the service at http:\/\/127\.0\.0\.1:1 could not be asked: no answer/,
    );

    // Added while start runs: its first runs start at the next refresh, and its rows arrive within a minute.
    const ids = (xs: number[]) => xs.join(',');
    const added = await companies(
      [
        'add',
        'south',
        '--base-url',
        sandbox.url,
        '--api-key-stdin',
        '--form-ids',
        ids(sandbox.data.formIds()),
        '--run-type-ids',
        ids(sandbox.data.runTypeIds()),
        '--rate-limit',
        '100/1s',
      ],
      `${SOUTH_KEY}\n`,
    );
    expect(added.code, added.out).toBe(0);
    const addedAt = Date.now();
    await waitFor(
      () => `rows of south; output:\n${start!.output().slice(-3000)}`,
      async () => (await count('individuals', 'south')) > 0 && (await count('shift_assignments', 'south')) > 0,
      60_000,
      500,
    );
    expect(Date.now() - addedAt).toBeLessThan(60_000);

    // Rotated: once the process read the table again, the old key is revoked at the service; no request is refused.
    const rotated = await companies(['rotate-key', 'south', '--api-key-stdin'], SOUTH_NEW_KEY);
    expect(rotated.code, rotated.out).toBe(0);
    await waitFor('the rotation to be read', async () => start!.output().includes('company API key rotated'), 10_000);
    const revokedAt = new Date();
    expect((await fetch(`${sandbox.url}/_sandbox/keys/revoke?key=${SOUTH_KEY}`, { method: 'POST' })).status).toBe(200);
    await waitFor(
      'a run of south after the old key was revoked',
      async () =>
        (
          await sql`select 1 from workforce.sync_runs where company_key = 'south' and started_at > ${revokedAt} and outcome = 'ok'`
        ).length > 0,
      30_000,
      500,
    );
    expect((await revoked())[SOUTH_KEY]).toBe(0);
    expect(
      await sql`select stream, error from workforce.sync_runs where company_key = 'south' and outcome = 'failed'`,
    ).toEqual([]);

    // Paused: no run of it starts after the refresh, while north's go on.
    const paused = await companies(['pause', 'south']);
    expect(paused.code, paused.out).toBe(0);
    await waitFor('the pause to be read', async () => start!.output().includes('company paused'), 10_000);
    await waitFor(
      'runs under way to end',
      async () =>
        (await sql`select 1 from workforce.sync_runs where company_key = 'south' and finished_at is null`).length === 0,
      20_000,
      250,
    );
    const pausedAt = new Date();
    await new Promise((r) => setTimeout(r, 7_000));
    expect(
      await sql`select stream, started_at from workforce.sync_runs where company_key = 'south' and started_at > ${pausedAt}`,
    ).toEqual([]);
    expect(
      (await sql`select 1 from workforce.sync_runs where company_key = 'north' and started_at > ${pausedAt}`).length,
    ).toBeGreaterThan(0);

    // Removed with --purge: no row of south in any table that has company_key, but the audit of who did it.
    const removed = await companies(['remove', 'south', '--purge', '--yes']);
    expect(removed.code, removed.out).toBe(0);
    expect(removed.out).toMatch(/company south removed; \d+ rows purged/);
    const tables = await sql<
      { name: string }[]
    >`select table_name as name from information_schema.columns where table_schema = 'workforce' and column_name = 'company_key'`;
    expect(tables.length).toBeGreaterThan(20);
    for (const { name } of tables.filter((t) => t.name !== 'audit')) expect(await count(name, 'south'), name).toBe(0);
    expect(await count('audit', 'south')).toBeGreaterThan(0);
    expect(await count('individuals', 'north')).toBeGreaterThan(0);

    // No key in clear in the warehouse, the logs or Redis.
    const everywhere = [await warehouseText(), start.output(), added.out, rotated.out, await redisText()].join('\n');
    for (const key of [NORTH_KEY, SOUTH_KEY, SOUTH_NEW_KEY, WRONG_KEY])
      expect(everywhere.includes(key), key).toBe(false);
    expect((await redis.keys('*')).length).toBeGreaterThan(0);
  }, 150_000);
});

describe('wfsync companies while wfsync start runs jobs in its own process (no Redis)', () => {
  it("runs a company added meanwhile, and stops a paused one's runs", async () => {
    const databaseUrl = await freshDatabase();
    const db = postgres(databaseUrl, { max: 1, onnotice: () => {} });
    const { REDIS_URL: _redis, ...withoutRedis } = env;
    const settings = { ...withoutRedis, DATABASE_URL: databaseUrl };
    const inProcess = spawnWfsync(['start'], settings);
    try {
      await waitFor(
        () => `start to be up; output so far:\n${inProcess.output().slice(-3000)}`,
        async () => inProcess.output().includes('scheduled incremental syncs'),
        60_000,
      );
      const added = await companies(
        ['add', 'east', '--base-url', sandbox.url, '--api-key-stdin', '--rate-limit', '100/1s'],
        SOUTH_NEW_KEY,
        settings,
      );
      expect(added.code, added.out).toBe(0);
      await waitFor(
        () => `rows of east; output:\n${inProcess.output().slice(-3000)}`,
        async () => (await count('individuals', 'east', db)) > 0,
        60_000,
        500,
      );
      expect((await companies(['pause', 'east'], '', settings)).code).toBe(0);
      await waitFor('the pause to be read', async () => inProcess.output().includes('company paused'), 10_000);
      await waitFor(
        'runs under way to end',
        async () =>
          (await db`select 1 from workforce.sync_runs where company_key = 'east' and finished_at is null`).length === 0,
        20_000,
        250,
      );
      const pausedAt = new Date();
      await new Promise((r) => setTimeout(r, 7_000));
      expect(
        await db`select stream from workforce.sync_runs where company_key = 'east' and started_at > ${pausedAt}`,
      ).toEqual([]);
      expect(
        (await db`select 1 from workforce.sync_runs where company_key = 'north' and started_at > ${pausedAt}`).length,
      ).toBeGreaterThan(0);
      expect(inProcess.output()).not.toContain(SOUTH_NEW_KEY);
    } finally {
      inProcess.proc.kill('SIGTERM');
      await inProcess.exited();
      await db.end();
    }
  }, 120_000);
});

describe('wfsync companies streams', () => {
  const OFF = 'run-log-form-responses';
  const TABLES = ['run_log_form_responses', 'run_log_form_response_answers', 'run_log_crew'];
  let north: RunningSandbox;
  let south: RunningSandbox;
  let db: postgres.Sql;
  let cwd: string;
  let settings: Record<string, string>;

  beforeAll(async () => {
    // A sandbox each: what one receives is what its company's runs asked for.
    const started = (seed: number) =>
      startSandbox({ port: 0, seed, size: 'tiny', rateLimit: { limit: 100, periodMs: 1000 } });
    [north, south] = await Promise.all([started(21), started(22)]);
    const databaseUrl = await freshDatabase();
    db = postgres(databaseUrl, { max: 1, onnotice: () => {} });
    cwd = mkdtempSync(join(tmpdir(), 'wfsync-streams-'));
    const company = (key: string, s: RunningSandbox) => ({
      key,
      apiKey: s.apiKey,
      baseUrl: s.url,
      formIds: s.data.formIds(),
      runTypeIds: s.data.runTypeIds(),
    });
    settings = {
      DATABASE_URL: databaseUrl,
      WFS_COMPANIES: JSON.stringify([company('north', north), company('south', south)]),
      WFS_RATE_LIMIT: '100/1s',
      WFS_SECRET_KEY: 'streams-test-secret-key',
      WFS_COMPANIES_REFRESH_SECONDS: '1',
      LOG_LEVEL: 'warn',
    };
  });

  afterAll(async () => {
    await db?.end();
    await Promise.all([north?.close(), south?.close()]);
    if (cwd) rmSync(cwd, { recursive: true, force: true });
  });

  const wfsync = (args: string[]) => runWfsync(args, settings, cwd);
  const streams = (args: string[]) => wfsync(['companies', 'streams', ...args]);
  /** The one line a refused command prints, and that nothing changed. */
  const refused = async (args: string[], line: string | RegExp) => {
    const before = await db`select company_key, streams_off from workforce.companies order by 1`;
    const ran = await streams(args);
    expect(ran.code, ran.stderr).toBe(1);
    expect(ran.stdout).toBe('');
    expect(ran.stderr.trim().split('\n')).toEqual([typeof line === 'string' ? line : expect.stringMatching(line)]);
    expect(await db`select company_key, streams_off from workforce.companies order by 1`).toEqual(before);
  };
  const syncOnce = async () => {
    const ran = await wfsync(['sync', '--once', '--streams', `run-log-forms,${OFF}`, '--json']);
    expect(ran.code, ran.stderr).toBe(0);
    const summaries = JSON.parse(ran.stdout) as {
      companyKey: string;
      streams: { stream: string; outcome: string; requests: number; rows: number }[];
    }[];
    return (company: string, stream: string) =>
      summaries.find((s) => s.companyKey === company)!.streams.find((s) => s.stream === stream)!;
  };
  const rows = async (company: string) =>
    Object.fromEntries(await Promise.all(TABLES.map(async (t) => [t, await count(t, company, db)] as const)));
  const asked = (s: RunningSandbox) => s.stats().byEndpoint.runLogFormResponses ?? 0;

  it('turns a stream off (no request for it in the next sync), purges only its rows of that company, and on again', async () => {
    const first = await syncOnce();
    expect(first('north', OFF).outcome).toBe('ok');
    const synced = await rows('north');
    expect(synced.run_log_form_responses).toBeGreaterThan(0);
    expect(synced.run_log_form_response_answers).toBeGreaterThan(0);

    // Bad input: one line, and nothing changes.
    await refused(['nowhere', '--off', OFF], /^wfsync: company nowhere is not added/);
    await refused(
      ['north', '--off', 'run-logs'],
      /^wfsync: companies streams: --off: "run-logs" is not a stream; streams: certifications, .*run-log-form-responses/,
    );
    await refused(['north', '--off', OFF, '--on', OFF], 'wfsync: companies streams: give --off or --on, not both');
    await refused(['north'], 'wfsync: companies streams: give --off STREAM[,STREAM] or --on STREAM[,STREAM]');
    await refused(['north', '--on', OFF, '--purge'], /^wfsync: companies streams: --purge goes with --off/);
    await refused(
      ['north', '--off', 'individuals'],
      'wfsync: company north: individuals is read by individual-certifications: turn it off too, or keep individuals',
    );

    const off = await streams(['north', '--off', OFF]);
    expect(off.code, off.stderr).toBe(0);
    expect(off.stdout.trim()).toBe(
      `company north: ${OFF} off; running processes stop reading them within 1 s; their rows stay (--purge deletes them)`,
    );
    const listed = JSON.parse((await wfsync(['companies', 'list', '--json'])).stdout) as {
      key: string;
      streamsOff: string[];
    }[];
    expect(listed.map((c) => [c.key, c.streamsOff])).toEqual([
      ['north', [OFF]],
      ['south', []],
    ]);
    expect((await wfsync(['companies', 'list'])).stdout).toMatch(new RegExp(`^north .* streams off: ${OFF}$`, 'm'));

    const [northAsked, southAsked] = [asked(north), asked(south)];
    const next = await syncOnce();
    expect(next('north', OFF)).toMatchObject({ outcome: 'off', requests: 0 });
    expect(next('north', 'run-log-forms').outcome).toBe('ok');
    expect(next('south', OFF).outcome).toBe('ok');
    expect(asked(north)).toBe(northAsked);
    expect(asked(south)).toBeGreaterThan(southAsked);
    expect(await rows('north')).toEqual(synced);

    const resync = await wfsync(['resync', 'north', OFF]);
    expect(resync.code).toBe(1);
    expect(resync.stderr.trim()).toBe(
      `wfsync: company north: stream ${OFF} is off; turn it on first (wfsync companies streams north --on ${OFF})`,
    );

    // Purged: north's rows of the stream and its checkpoints go; south's stay, and north's other streams.
    const unconfirmed = await streams(['north', '--off', OFF, '--purge']);
    expect(unconfirmed.code).toBe(1);
    expect(unconfirmed.stderr.trim()).toMatch(/--purge: add --yes to confirm/);
    expect(await rows('north')).toEqual(synced);
    const southRows = await rows('south');
    const purged = await streams(['north', '--off', OFF, '--purge', '--yes']);
    expect(purged.code, purged.stderr).toBe(0);
    expect(purged.stdout).toMatch(/; \d+ rows purged from \d+ tables$/m);
    expect(await rows('north')).toEqual(Object.fromEntries(TABLES.map((t) => [t, 0])));
    expect(await db`select 1 from workforce.sync_state where company_key = 'north' and stream = ${OFF}`).toEqual([]);
    expect(await rows('south')).toEqual(southRows);
    expect(await count('run_log_forms', 'north', db)).toBeGreaterThan(0);

    // wfsync status does not count it failed while it is off.
    await db`insert into workforce.sync_runs (company_key, stream, finished_at, outcome, error)
             values ('north', ${OFF}, now(), 'failed', 'a failure from before it was turned off')`;
    const status = await wfsync(['status', '--json']);
    expect(status.code, status.stderr).toBe(0);
    const line = (
      JSON.parse(status.stdout) as { streams: { company: string; stream: string; freshness: string }[] }
    ).streams.find((s) => s.company === 'north' && s.stream === OFF);
    expect(line?.freshness).toBe('off');

    // On again: its first sync reads it all again.
    const on = await streams(['north', '--on', OFF]);
    expect(on.code, on.stderr).toBe(0);
    expect(on.stdout).toMatch(new RegExp(`^company north: ${OFF} on again; running processes read them within 1 s`));
    expect((await wfsync(['status'])).code).toBe(1);
    const again = await syncOnce();
    expect(again('north', OFF).outcome).toBe('ok');
    expect(asked(north)).toBeGreaterThan(northAsked);
    expect(await rows('north')).toEqual(synced);
    expect((await wfsync(['status'])).code).toBe(0);

    const timeline = await db<{ event: string; stream: string }[]>`
      select event, stream from workforce.events where company_key = 'north' and event in ('stream_turned_off', 'stream_purged', 'stream_turned_on') order by id`;
    expect(timeline.map((e) => [e.event, e.stream])).toEqual([
      ['stream_turned_off', OFF],
      ['stream_purged', OFF],
      ['stream_turned_on', OFF],
    ]);
  }, 300_000);

  it('turns a stream others read off only with them, and on only with it', async () => {
    const both = 'individuals,individual-certifications';
    expect((await streams(['south', '--off', both])).code).toBe(0);
    await refused(
      ['south', '--on', 'individual-certifications'],
      'wfsync: company south: individual-certifications reads individuals, which is off: turn individuals on too',
    );
    const on = await streams(['south', '--on', both]);
    expect(on.code, on.stderr).toBe(0);
    expect((await db`select streams_off from workforce.companies where company_key = 'south'`)[0]!.streams_off).toEqual(
      [],
    );
  }, 60_000);
});
