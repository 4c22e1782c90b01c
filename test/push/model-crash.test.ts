import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Individual } from '../../src/source/schemas/index.ts';
import { runStreams, selectStreams } from '../../src/sync/runner.ts';
import { addModel } from '../../src/push/models.ts';
import { runModel } from '../../src/push/model-run.ts';
import { openTestSync, type TestSync } from '../support/sync-context.ts';
import { waitFor } from '../support/processes.ts';
import { Rng } from '../../src/sandbox/rng.ts';
import { openRig, SECRET, type PushRig } from './support.ts';

/**
 * A model's run under SIGKILL: processes that run the push runner and the model over and over are killed at
 * random moments, mid-run or mid-send. Whatever a killed run had stored or not, no change is queued twice: each
 * changed row ends as one change in the outbox, applied once at the service.
 */

const WORKER = fileURLToPath(new URL('./model-worker.ts', import.meta.url));

let rig: PushRig;
let sync: TestSync;
const procs: ChildProcess[] = [];
let output = '';
beforeAll(async () => {
  rig = await openRig({ start: false });
  sync = await openTestSync(rig.sandbox, { databaseUrl: rig.databaseUrl });
  await runStreams(sync.ctx, selectStreams(['individuals']));
}, 60_000);
afterAll(async () => {
  for (const p of procs) if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
  await sync?.close();
  await rig?.close();
});

const exited = (p: ChildProcess) =>
  new Promise<void>((r) => (p.exitCode !== null || p.signalCode !== null ? r() : p.once('exit', () => r())));

function spawnWorker(): ChildProcess {
  const proc = spawn(process.execPath, ['--import', 'tsx', WORKER], {
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/root',
      DATABASE_URL: rig.databaseUrl,
      BASE_URL: rig.sandbox.url,
      API_KEY: rig.sandbox.apiKey,
      WFS_SECRET_KEY: SECRET,
      MODEL: 'crash',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  procs.push(proc);
  proc.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  return proc;
}

describe('a model run under SIGKILL', () => {
  it('queues no change twice', async () => {
    const sql = rig.warehouse.sql;
    const wh = `"${rig.warehouse.schema}"`;
    await sql.unsafe(`create schema hr`);
    await sql.unsafe(
      `create table hr.people as select employee_number, last_name || '-Crash' as last_name from ${wh}.individuals where employee_number is not null and last_name is not null`,
    );
    const changed = (await sql.unsafe<{ employee_number: string; last_name: string }[]>(`select * from hr.people`))
      .length;
    expect(changed).toBeGreaterThan(10);
    await addModel(
      rig.warehouse,
      {
        name: 'crash',
        company: 'acme',
        kind: 'individuals',
        query: `select employee_number as "EmployeeNumber", last_name as "LastName" from hr.people`,
        keyField: 'EmployeeNumber',
        maxChanges: 10_000,
      },
      ['acme'],
    );
    const rng = new Rng(5);
    for (let round = 0; round < 6; round++) {
      const p = spawnWorker();
      // Killed once it is up, somewhere in a model run or in sending what the last one queued.
      await waitFor(
        () => 'a worker to start',
        async () => (output.split('"ready"').length - 1 > round ? true : undefined),
        30_000,
        20,
      );
      await new Promise((r) => setTimeout(r, Math.floor(rng.next() * 400)));
      p.kill('SIGKILL');
      await exited(p);
    }
    const last = spawnWorker();
    const outbox = () =>
      sql.unsafe<{ change_id: string; entity_key: string; status: string }[]>(
        `select change_id, entity_key, status from ${wh}.push_outbox`,
      );
    await waitFor(
      () => 'every change of the model to be applied',
      async () => {
        const rows = await outbox();
        return rows.length === changed && rows.every((r) => r.status === 'applied') ? rows : undefined;
      },
      120_000,
      250,
    );
    last.kill('SIGKILL');
    await exited(last);
    const rows = await outbox();
    expect(new Set(rows.map((r) => r.entity_key)).size).toBe(changed);
    expect(new Set(rows.map((r) => r.change_id)).size).toBe(changed);
    const truth = rig.sandbox.data.truth('individuals') as Individual[];
    const wanted = await sql.unsafe<{ employee_number: string; last_name: string }[]>(`select * from hr.people`);
    for (const w of wanted)
      expect(truth.find((i) => i.EmployeeNumber === w.employee_number)?.LastName).toBe(w.last_name);
    // Updates are safe to resend after a lost answer; an insert would mean a change was taken for a new person.
    expect(rig.sandbox.stats().writes.applied.individualInsert).toBe(0);
    expect(await runModel(rig.intake, 'crash')).toMatchObject({ outcome: 'ok', changed: 0, queued: 0 });
  }, 240_000);
});
