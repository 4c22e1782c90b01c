import { pino } from 'pino';
import { Observers } from '../src/observers.ts';
import { addModel } from '../src/push/models.ts';
import { runModel } from '../src/push/model-run.ts';
import { previewPush } from '../src/push/preview.ts';
import type { IntakeContext } from '../src/push/intake.ts';
import { createPushRunner } from '../src/push/runner.ts';
import { createSealer } from '../src/warehouse/secret.ts';
import { createRateLimiter } from '../src/ratelimit/index.ts';
import { startSandbox, type SandboxSize } from '../src/sandbox/index.ts';
import { SourceClient } from '../src/source/client.ts';
import { clockProbe } from '../src/resources/index.ts';
import type { Individual } from '../src/source/schemas/index.ts';
import { runStreams, selectStreams } from '../src/sync/runner.ts';
import { openWarehouse } from '../src/warehouse/connection.ts';
import { getChange } from '../src/push/outbox.ts';
import { startPostgres } from '../test/support/services.ts';

/**
 * Preview and push from a model, against the sandbox over HTTP (100/1s) and a warehouse whose individuals were
 * synced from it:
 *   dry_run    a dry run of BENCH_PREVIEW_CHANGES (1,000) individual updates against a warehouse synced at
 *              BENCH_SIZE (medium): the median of BENCH_REPEATS (5) runs, against the goal of 1 s;
 *   model_run  a model over BENCH_MODEL_ROWS (10,000) desired individuals (a table in the same Postgres copied from
 *              the warehouse synced at BENCH_MODEL_SIZE, large), BENCH_MODEL_CHANGED (50) of them changed: how long
 *              the run takes, how many changes it queues, and the requests the service receives until they are
 *              applied (a lookup and an Update each: goal exactly 2 per change).
 * Prints one JSON document.
 */

const size = (process.env.BENCH_SIZE ?? 'medium') as SandboxSize;
const modelSize = (process.env.BENCH_MODEL_SIZE ?? 'large') as SandboxSize;
const previewChanges = Number(process.env.BENCH_PREVIEW_CHANGES ?? 1000);
const repeats = Number(process.env.BENCH_REPEATS ?? 5);
const modelRows = Number(process.env.BENCH_MODEL_ROWS ?? 10_000);
const modelChanged = Number(process.env.BENCH_MODEL_CHANGED ?? 50);
const log = pino({ level: 'silent' });
const rateLimit = { limit: 100, periodMs: 1000 };
const round = (x: number, digits = 1) => Math.round(x * 10 ** digits) / 10 ** digits;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function synced(pg: string, sandboxSize: SandboxSize) {
  const started = Date.now();
  const sandbox = await startSandbox({ seed: 4, size: sandboxSize, rateLimit, log });
  const warehouse = await openWarehouse({ databaseUrl: pg, schema: `bench_${Date.now()}`, max: 12 });
  await warehouse.migrate();
  const limiter = createRateLimiter({ rateLimit, logger: log });
  const observers = new Observers();
  const client = new SourceClient({
    baseUrl: sandbox.url,
    apiKey: sandbox.apiKey,
    limiter,
    logger: log,
    observers,
    company: 'acme',
  });
  const generatedMs = Date.now() - started;
  const syncStarted = Date.now();
  await runStreams(
    {
      companyKey: 'acme',
      client,
      warehouse,
      log,
      now: () => client.serviceNow(),
      refreshClock: () => client.freshServiceNow(clockProbe, 0),
      formIds: [],
      runTypeIds: [],
    },
    selectStreams(['individuals']),
  );
  const sealer = createSealer('bench-secret-0123456789');
  const intake: IntakeContext = { warehouse, sealer, companies: [{ key: 'acme', singleSignOn: true }] };
  return {
    sandbox,
    warehouse,
    client,
    sealer,
    intake,
    observers,
    setup: { size: sandboxSize, generate_ms: generatedMs, sync_individuals_ms: Date.now() - syncStarted },
    async close() {
      await client.close();
      await limiter.close();
      await warehouse.sql.unsafe(`drop schema "${warehouse.schema}" cascade`);
      await warehouse.close();
      await sandbox.close();
    },
  };
}

async function dryRun(pg: string) {
  const r = await synced(pg, size);
  try {
    const people = (r.sandbox.data.truth('individuals') as Individual[]).slice(0, previewChanges);
    const changes = people.map((p, i) => ({
      ServiceId: p.ServiceId,
      LastName: i % 2 ? `${p.LastName}-x` : p.LastName,
      Department: p.Department,
    }));
    const requestsBefore = r.sandbox.stats().requests;
    const times: number[] = [];
    let last: Awaited<ReturnType<typeof previewPush>> | undefined;
    for (let i = 0; i < repeats; i++) {
      const t0 = performance.now();
      last = await previewPush(r.intake, 'individual', changes);
      times.push(performance.now() - t0);
    }
    const outbox = Number(
      (await r.warehouse.sql.unsafe(`select count(*) as n from "${r.warehouse.schema}".push_outbox`))[0]!.n,
    );
    return {
      ...r.setup,
      changes: changes.length,
      median_ms: round(median(times)),
      max_ms: round(Math.max(...times)),
      goal_ms: 1000,
      updates: last!.updates,
      with_a_change: last!.changes.filter((c) => Object.keys(c.changed ?? {}).length > 0).length,
      requests_it_would_cost: last!.requests,
      requests_made: r.sandbox.stats().requests - requestsBefore,
      outbox_rows: outbox,
    };
  } finally {
    await r.close();
  }
}

async function modelRun(pg: string) {
  const r = await synced(pg, modelSize);
  const wh = r.warehouse;
  const table = `"${wh.schema}".bench_hr_people`;
  await wh.sql.unsafe(
    `create table ${table} as select employee_number, first_name, last_name, status from "${wh.schema}".individuals
     where employee_number is not null and first_name is not null and last_name is not null order by service_id limit ${modelRows}`,
  );
  await wh.sql.unsafe(
    `update ${table} set last_name = last_name || '-Bench' where employee_number in (select employee_number from ${table} order by employee_number limit ${modelChanged})`,
  );
  const rows = Number((await wh.sql.unsafe(`select count(*) as n from ${table}`))[0]!.n);
  await addModel(
    wh,
    {
      name: 'bench',
      company: 'acme',
      kind: 'individuals',
      query: `select employee_number as "EmployeeNumber", first_name as "FirstName", last_name as "LastName", status as "Status" from ${table}`,
      keyField: 'EmployeeNumber',
      maxChanges: 100,
    },
    ['acme'],
  );
  const runner = createPushRunner({
    warehouse: wh,
    clients: new Map([['acme', r.client]]),
    sealer: r.sealer,
    log,
    observers: r.observers,
    sweepMs: 200,
  });
  try {
    const before = r.sandbox.stats();
    const t0 = performance.now();
    const run = await runModel(r.intake, 'bench');
    const runMs = performance.now() - t0;
    const ids = (await wh.sql.unsafe<{ id: string }[]>(`select id from "${wh.schema}".push_outbox`)).map((x) =>
      Number(x.id),
    );
    const sendStarted = performance.now();
    await runner.start();
    for (;;) {
      const states = await Promise.all(ids.map((id) => getChange(wh.sql, wh, id)));
      if (states.every((s) => s && ['applied', 'refused', 'failed'].includes(s.status))) break;
      await new Promise((res) => setTimeout(res, 200));
    }
    const sendMs = performance.now() - sendStarted;
    await runner.stop();
    const after = r.sandbox.stats();
    const applied = Number(
      (await wh.sql.unsafe(`select count(*) as n from "${wh.schema}".push_outbox where status = 'applied'`))[0]!.n,
    );
    const rerun = await runModel(r.intake, 'bench');
    const byEndpoint = Object.fromEntries(
      Object.entries(after.byEndpoint)
        .map(([k, n]) => [k, (n ?? 0) - (before.byEndpoint[k as keyof typeof before.byEndpoint] ?? 0)])
        .filter(([, n]) => (n as number) > 0),
    );
    return {
      ...r.setup,
      model_rows: rows,
      changed_rows: modelChanged,
      run_ms: round(runMs),
      read: run.rowsRead,
      unchanged: run.unchanged,
      changed: run.changed,
      queued: run.queued,
      refused: run.refused,
      applied,
      send_ms: round(sendMs),
      requests: after.requests - before.requests,
      requests_by_endpoint: byEndpoint,
      requests_per_change: round((after.requests - before.requests) / Math.max(1, run.queued), 2),
      rerun_queued: rerun.queued,
    };
  } finally {
    await runner.stop();
    await r.close();
  }
}

const pg = await startPostgres();
try {
  const result = { dry_run: await dryRun(pg.url), model_run: await modelRun(pg.url) };
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
} finally {
  await pg.stop();
}
