import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Individual } from '../../src/source/schemas/index.ts';
import { runStreams, selectStreams } from '../../src/sync/runner.ts';
import { addModel, ModelError, setModelPaused } from '../../src/push/models.ts';
import { previewModel, runModel } from '../../src/push/model-run.ts';
import { openTestSync, type TestSync } from '../support/sync-context.ts';
import { openRig, type PushRig } from './support.ts';

/**
 * Push from a model: an HR table of desired state in the same Postgres, a model over it, and its runs against
 * the sandbox over HTTP.
 */

let rig: PushRig;
let sync: TestSync;
beforeAll(async () => {
  rig = await openRig();
  sync = await openTestSync(rig.sandbox, { databaseUrl: rig.databaseUrl });
  await runStreams(sync.ctx, selectStreams(['individuals', 'individual-certifications']));
  const sql = rig.warehouse.sql;
  await sql.unsafe(`create schema hr`);
  await sql.unsafe(
    `create table hr.people (employee_number text primary key, first_name text, last_name text, status text, email text, logon text)`,
  );
  await sql.unsafe(
    `insert into hr.people select employee_number, first_name, last_name, status, primary_email_address, logon_id
     from "${rig.warehouse.schema}".individuals where employee_number is not null and first_name is not null and last_name is not null and status is not null`,
  );
}, 60_000);
afterAll(async () => {
  await sync?.close();
  await rig?.close();
});

const people = () => rig.sandbox.data.truth('individuals') as Individual[];
const outboxCount = async () =>
  Number((await rig.warehouse.sql.unsafe(`select count(*) as n from "${rig.warehouse.schema}".push_outbox`))[0]!.n);
const HR_MODEL = `select employee_number as "EmployeeNumber", first_name as "FirstName", last_name, status as "Status" from hr.people`;

describe('push from a model', () => {
  it('refuses at add a query that does not plan, a column that is no field, a read-only field and a field the warehouse does not keep', async () => {
    const add = (name: string, query: string) =>
      addModel(rig.warehouse, { name, company: 'acme', kind: 'individuals', query, keyField: 'EmployeeNumber' }, [
        'acme',
      ]);
    await expect(add('broken', 'select nope from hr.nothing')).rejects.toThrow(/does not plan/);
    await expect(
      add('odd', `select employee_number as "EmployeeNumber", 1 as shoe_size from hr.people`),
    ).rejects.toThrow(/shoe_size is not a field of individuals/);
    await expect(
      add('ro', `select employee_number as "EmployeeNumber", 'x' as "LegalFirstName" from hr.people`),
    ).rejects.toThrow(/LegalFirstName is read only/);
    await expect(
      add('ssn', `select employee_number as "EmployeeNumber", '123456789' as "SSN" from hr.people`),
    ).rejects.toThrow(/SSN is not kept in the warehouse/);
    await expect(add('nokey', `select first_name as "FirstName" from hr.people`)).rejects.toBeInstanceOf(ModelError);
    const blocking = {
      fieldPolicy: async () => new Map([['FirstName', 'block']] as const),
      hashValue: (v: string) => v,
    };
    await expect(
      addModel(
        rig.warehouse,
        { name: 'blocked', company: 'acme', kind: 'individuals', query: HR_MODEL, keyField: 'EmployeeNumber' },
        ['acme'],
        blocking,
      ),
    ).rejects.toThrow(
      "model blocked: FirstName is blocked by the company's personal-data policy, so it cannot be compared",
    );
  });

  it('queues exactly the one changed row, which the service applies; run again, nothing is queued', async () => {
    await addModel(
      rig.warehouse,
      { name: 'hr', company: 'acme', kind: 'individuals', query: HR_MODEL, keyField: 'EmployeeNumber' },
      ['acme'],
    );
    const first = await runModel(rig.intake, 'hr');
    expect(first).toMatchObject({ outcome: 'ok', changed: 0, queued: 0 });
    expect(first.rowsRead).toBeGreaterThan(5);
    const [target] = await rig.warehouse.sql.unsafe<{ employee_number: string; last_name: string }[]>(
      `select employee_number, last_name from hr.people order by employee_number limit 1`,
    );
    await rig.warehouse.sql.unsafe(
      `update hr.people set last_name = last_name || '-Model' where employee_number = $1`,
      [target!.employee_number],
    );
    const preview = await previewModel(rig.intake, 'hr');
    expect(preview).toMatchObject({ changed: 1, queued: 0 });
    expect(preview.changes[0]).toMatchObject({
      action: 'update',
      changed: { LastName: [target!.last_name, `${target!.last_name}-Model`] },
      valid: true,
    });
    const before = await outboxCount();
    const run = await runModel(rig.intake, 'hr');
    expect(run).toMatchObject({ outcome: 'ok', changed: 1, queued: 1, refused: 0, unchanged: first.rowsRead - 1 });
    expect(await outboxCount()).toBe(before + 1);
    const [id] = (
      await rig.warehouse.sql.unsafe<{ id: string }[]>(
        `select id from "${rig.warehouse.schema}".push_outbox order by id desc limit 1`,
      )
    ).map((r) => Number(r.id));
    const [done] = await rig.settled([id!]);
    expect(done!.status).toBe('applied');
    expect(people().find((p) => p.EmployeeNumber === target!.employee_number)!.LastName).toBe(
      `${target!.last_name}-Model`,
    );
    expect(await runModel(rig.intake, 'hr')).toMatchObject({ outcome: 'ok', changed: 0, queued: 0 });
    expect(await outboxCount()).toBe(before + 1);
  });

  it('refuses the row with an invalid value and queues the others', async () => {
    const rows = await rig.warehouse.sql.unsafe<{ employee_number: string }[]>(
      `select employee_number from hr.people order by employee_number desc limit 3`,
    );
    await rig.warehouse.sql.unsafe(
      `update hr.people set first_name = first_name || 'z' where employee_number = any($1)`,
      [rows.map((r) => r.employee_number)],
    );
    await rig.warehouse.sql.unsafe(`update hr.people set status = 'Retired' where employee_number = $1`, [
      rows[0]!.employee_number,
    ]);
    const before = await outboxCount();
    const run = await runModel(rig.intake, 'hr');
    expect(run).toMatchObject({ outcome: 'ok', changed: 3, queued: 2, refused: 1 });
    expect(run.changes).toEqual([
      expect.objectContaining({
        key: rows[0]!.employee_number,
        valid: false,
        refused: { Status: expect.stringMatching(/Active, LOA, Former/) },
      }),
    ]);
    expect(await outboxCount()).toBe(before + 2);
    const stored = await rig.warehouse.sql.unsafe(
      `select id from "${rig.warehouse.schema}".push_outbox order by id desc limit 2`,
    );
    await rig.settled(stored.map((r) => Number(r.id)));
  });

  it('queues nothing and fails in one line when more rows differ than its cap', async () => {
    const query = `select 'CAP' || g as "EmployeeNumber", 'Cap' as "FirstName", 'Row' || g as "LastName", 'Active' as "Status",
                          'cap' || g || '@example.org' as "PrimaryEmailAddress", 'cap' || g as "LogonId" from generate_series(1, 10000) g`;
    await addModel(
      rig.warehouse,
      { name: 'everyone', company: 'acme', kind: 'individuals', query, keyField: 'EmployeeNumber', maxChanges: 100 },
      ['acme'],
    );
    const before = await outboxCount();
    const run = await runModel(rig.intake, 'everyone');
    expect(run).toMatchObject({ outcome: 'failed', overCap: true, rowsRead: 10_000, changed: 10_000, queued: 0 });
    expect(run.error).toBe(
      'model everyone: 10000 rows differ from the warehouse, more than its --max-changes 100: nothing queued',
    );
    expect(await outboxCount()).toBe(before);
    const [kept] = await rig.warehouse.sql.unsafe(
      `select outcome, over_cap, rows_read, changed, queued from "${rig.warehouse.schema}".push_model_runs where model_name = 'everyone'`,
    );
    expect(kept).toEqual({ outcome: 'failed', over_cap: true, rows_read: 10_000, changed: 10_000, queued: 0 });
  });

  it('runs its query read only: a query that would write fails its run and writes nothing', async () => {
    await rig.warehouse.sql.unsafe(
      `create function hr.touch() returns text language sql as $$ insert into hr.people (employee_number) values ('TOUCHED') returning employee_number $$`,
    );
    await addModel(
      rig.warehouse,
      {
        name: 'writer',
        company: 'acme',
        kind: 'individuals',
        query: `select hr.touch() as "EmployeeNumber"`,
        keyField: 'EmployeeNumber',
      },
      ['acme'],
    );
    const run = await runModel(rig.intake, 'writer');
    expect(run).toMatchObject({ outcome: 'failed', queued: 0 });
    expect(run.error).toBe('model writer: its query failed');
    expect(run.detail).toMatch(/read-only transaction/);
    expect(await rig.warehouse.sql.unsafe(`select 1 from hr.people where employee_number = 'TOUCHED'`)).toHaveLength(0);
  });
});

describe('a model of credentials', () => {
  it('keyed by IndividualCertificationId, a changed expiration date is one Update applied at the service; a key the warehouse lacks is refused', async () => {
    const sql = rig.warehouse.sql;
    const wh = `"${rig.warehouse.schema}"`;
    await sql.unsafe(
      `create table hr.credentials as select individual_certification_id as id, expiration_date as expires from ${wh}.individual_certifications
       where _deleted_at is null and expiration_date is not null and not coalesce(is_deleted, false) order by individual_certification_id limit 20`,
    );
    const [target] = await sql.unsafe<{ id: number }[]>(`select id from hr.credentials order by id limit 1`);
    await sql.unsafe(`update hr.credentials set expires = date '2031-03-31' where id = $1`, [target!.id]);
    await sql.unsafe(`insert into hr.credentials values (999999999, date '2030-01-01')`);
    await addModel(
      rig.warehouse,
      {
        name: 'credentials',
        company: 'acme',
        kind: 'certifications',
        query: `select id as "IndividualCertificationId", expires as expiration_date from hr.credentials`,
        keyField: 'IndividualCertificationId',
      },
      ['acme'],
    );
    const run = await runModel(rig.intake, 'credentials');
    expect(run).toMatchObject({ outcome: 'ok', rowsRead: 21, changed: 2, queued: 1, refused: 1 });
    expect(run.changes[0]!.refused).toEqual({
      IndividualCertificationId: expect.stringMatching(/no record with IndividualCertificationId 999999999/),
    });
    const [last] = await sql.unsafe<{ id: string }[]>(`select id from ${wh}.push_outbox order by id desc limit 1`);
    const [done] = await rig.settled([Number(last!.id)]);
    expect(done!.status).toBe('applied');
    const truth = (
      rig.sandbox.data.truth('individualCertifications') as {
        IndividualCertificationId: number;
        ExpirationDate: string | null;
      }[]
    ).find((c) => c.IndividualCertificationId === target!.id)!;
    expect(truth.ExpirationDate?.slice(0, 10)).toBe('2031-03-31');
    expect(await runModel(rig.intake, 'credentials')).toMatchObject({ changed: 1, queued: 0, refused: 1 });
  });
});

describe('push models on their cron', () => {
  it('runs a model whose cron has come round, once however many schedulers check, and not while paused', async () => {
    const { ModelScheduler } = await import('../../src/push/model-schedule.ts');
    const { pino } = await import('pino');
    await addModel(
      rig.warehouse,
      {
        name: 'every-second',
        company: 'acme',
        kind: 'individuals',
        query: HR_MODEL,
        keyField: 'EmployeeNumber',
        cron: '* * * * * *',
      },
      ['acme'],
    );
    const runs = async () =>
      Number(
        (
          await rig.warehouse.sql.unsafe(
            `select count(*) as n from "${rig.warehouse.schema}".push_model_runs where model_name = 'every-second'`,
          )
        )[0]!.n,
      );
    const schedulers = [0, 1, 2].map(() => new ModelScheduler({ intake: rig.intake, log: pino({ level: 'silent' }) }));
    // Added a minute ago: its cron has come round since.
    await rig.warehouse.sql.unsafe(
      `update "${rig.warehouse.schema}".push_models set created_at = now() - interval '1 minute' where name = 'every-second'`,
    );
    const now = new Date();
    await Promise.all(schedulers.map((s) => s.check(now)));
    for (const s of schedulers) await s.check(now);
    expect(await runs()).toBe(1);
    await setModelPaused(rig.warehouse, 'every-second', true);
    await rig.warehouse.sql.unsafe(
      `delete from "${rig.warehouse.schema}".push_model_runs where model_name = 'every-second'`,
    );
    await schedulers[0]!.check(new Date());
    expect(await runs()).toBe(0);
  });
});
