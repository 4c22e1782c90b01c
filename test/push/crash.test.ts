import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.ts';
import { createSealer } from '../../src/warehouse/secret.ts';
import { pushCertifications, pushIndividuals, pushVerifications, type IntakeContext } from '../../src/push/intake.ts';
import type { Individual, IndividualCertification } from '../../src/source/schemas/index.ts';
import { openWarehouse, type Warehouse } from '../../src/warehouse/connection.ts';
import { freshDatabase } from '../support/db.ts';
import { waitFor } from '../support/processes.ts';
import { parseFaults } from '../../src/sandbox/faults.ts';
import { Rng } from '../../src/sandbox/rng.ts';

/**
 * Exactly once under crashes: 500 changes (individual inserts and updates, credential inserts, verification
 * results) while push worker processes are SIGKILLed at random and writes meet the sandbox's own faults
 * (`--faults lost=0.1,reset=0.05,500=0.05,only=writes`): lost answers (applied, then the connection dropped),
 * resets and 500s. Afterwards, by the sandbox's truth, each change was applied once, none
 * is missing, each entity's last change won, and every change is applied (or refused with a reason). Then the
 * logs, the warehouse, Redis and the outbox are searched for the SSNs and the API key: none is there in clear.
 */

const WORKER = fileURLToPath(new URL('./worker.ts', import.meta.url));
const SECRET = 'crash-secret-0123456789abcdef';

interface Crash {
  sandbox: RunningSandbox;
  warehouse: Warehouse;
  databaseUrl: string;
  apiKey: string;
  logs: string[];
}

const open: Crash[] = [];
afterAll(async () => {
  for (const c of open) {
    await c.warehouse.close();
    await c.sandbox.close();
  }
});

function spawnWorker(c: Crash, env: Record<string, string>): ChildProcess {
  const proc = spawn(process.execPath, ['--import', 'tsx', WORKER], {
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/root',
      DATABASE_URL: c.databaseUrl,
      BASE_URL: c.sandbox.url,
      API_KEY: c.apiKey,
      WFS_SECRET_KEY: SECRET,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const keep = (d: Buffer) => c.logs.push(d.toString());
  proc.stdout!.on('data', keep);
  proc.stderr!.on('data', keep);
  return proc;
}

const exited = (p: ChildProcess) =>
  new Promise<void>((r) => (p.exitCode !== null || p.signalCode !== null ? r() : p.once('exit', () => r())));

describe.each([
  { mode: 'in-process', bullmq: false },
  { mode: 'BullMQ', bullmq: true },
])('push crash test ($mode)', ({ bullmq }) => {
  it('applies 500 changes exactly once while workers are killed and answers are lost', async () => {
    const seeded = new Rng(bullmq ? 11 : 7);
    const rand = () => seeded.next();
    const apiKey = `crash-${randomBytes(6).toString('hex')}`;
    const sandbox = await startSandbox({
      seed: 3,
      size: 'tiny',
      rateLimit: { limit: 100, periodMs: 1000 },
      keys: [{ key: apiKey, scopes: ['individuals', 'certifications'] }],
      log: pino({ level: 'silent' }),
      faults: parseFaults('lost=0.1,reset=0.05,500=0.05,only=writes'),
    });
    const databaseUrl = await freshDatabase({ migrated: true });
    const warehouse = await openWarehouse({ databaseUrl });
    await warehouse.migrate();
    const c: Crash = { sandbox, warehouse, databaseUrl, apiKey, logs: [] };
    open.push(c);
    const intake: IntakeContext = { warehouse, sealer: createSealer(SECRET), companies: [{ key: 'acme' }] };
    const prefix = `crash${randomBytes(4).toString('hex')}`;
    const env: Record<string, string> = {
      REDIS_URL: inject('redisUrl'),
      PUSH_PREFIX: prefix,
      ...(bullmq ? { PUSH_BULLMQ: '1' } : {}),
    };

    // The changes: 100 inserts, 150 updates (to new and existing individuals), 150 credential inserts, 100 verification results.
    const existing = (sandbox.data.truth('individuals') as Individual[])
      .filter((i) => i.EmployeeNumber && i.LogonId && i.PrimaryEmailAddress && i.Status)
      .slice(0, 20);
    const certIds = (sandbox.data.truth('certifications') as { CertificationId: number }[]).map(
      (x) => x.CertificationId,
    );
    const pending = (sandbox.data.truth('pendingCertifications') as { IndividualCertificationId: number }[]).map(
      (p) => p.IndividualCertificationId,
    );
    const ssns: string[] = [];
    const people = Array.from({ length: 100 }, (_, i) => {
      const ssn = `58${String(1000000 + i * 7919).slice(-7)}`;
      ssns.push(ssn);
      return {
        FirstName: `New${i}`,
        LastName: 'Crash',
        Status: 'Active',
        PrimaryEmailAddress: `crash${i}@example.org`,
        LogonId: `${prefix}n${i}`,
        EmployeeNumber: `${prefix}-E${i}`,
        SSN: ssn,
      };
    });
    const updates: Record<string, unknown>[] = Array.from({ length: 150 }, (_, i) => {
      const fromNew = i % 3 !== 0;
      const base = fromNew
        ? people[Math.floor(rand() * people.length)]!
        : existing[Math.floor(rand() * existing.length)]!;
      return {
        EmployeeNumber: base.EmployeeNumber,
        LastName: base.LastName,
        Status: base.Status,
        PrimaryEmailAddress: base.PrimaryEmailAddress,
        LogonId: base.LogonId,
        FirstName: `Upd${i}`,
      };
    });
    // A credential's holder is an existing individual or a new one already pushed (its insert may still be pending).
    const creds = Array.from({ length: 150 }, (_, i) => {
      const known = [
        ...people.slice(0, (Math.floor(i / 30) + 1) * 20).map((p) => p.EmployeeNumber),
        ...existing.map((e) => e.EmployeeNumber!),
      ];
      return {
        EmployeeNumber: known[Math.floor(rand() * known.length)]!,
        CertificationId: certIds[i % certIds.length]!,
        CertificationNumber: `${prefix}-C${i}`,
        ExpirationDate: '2030-06-30',
      };
    });
    // Verified results for pending credentials (they leave the pending list), failed ones for others (they join it, Not Verified).
    const pendingSet = new Set(pending);
    const others = (sandbox.data.truth('individualCertifications') as IndividualCertification[])
      .map((x) => x.IndividualCertificationId)
      .filter((id) => !pendingSet.has(id));
    const verifiedIds = pending.slice(0, 25);
    const failedIds = others.slice(0, 100 - verifiedIds.length);
    expect(failedIds.length + verifiedIds.length).toBe(100);
    const verifications = [
      ...verifiedIds.map((id) => ({ IndividualCertificationId: String(id), IsVerified: true })),
      ...failedIds.map((id) => ({
        IndividualCertificationId: String(id),
        IsVerified: false,
        ErrorList: ['card expired'],
      })),
    ].map((v, i) => ({ ...v, RequestId: `${prefix}-R${i}` }));

    // Intake in slices while workers run and die.
    const slices: [typeof pushIndividuals, unknown[]][] = [];
    for (let k = 0; k < 5; k++) {
      slices.push([pushIndividuals, people.slice(k * 20, k * 20 + 20)]);
      slices.push([pushIndividuals, updates.slice(k * 30, k * 30 + 30)]);
      slices.push([pushCertifications, creds.slice(k * 30, k * 30 + 30)]);
      slices.push([pushVerifications, verifications.slice(k * 20, k * 20 + 20)]);
    }
    const workers = [spawnWorker(c, env), spawnWorker(c, env)];
    const ids: number[] = [];
    let kills = 0;
    const killer = setInterval(() => {
      const i = Math.floor(rand() * workers.length);
      workers[i]!.kill('SIGKILL');
      kills++;
      workers[i] = spawnWorker(c, env);
    }, 1500);
    try {
      for (const [push, items] of slices) {
        const r = await push(intake, items);
        if (!r.ok) throw new Error(`refused at intake: ${JSON.stringify(r.refused)}`);
        ids.push(...r.accepted.map((a) => a.id));
        await new Promise((res) => setTimeout(res, 300));
      }
      expect(ids).toHaveLength(500);
      const t = `"${warehouse.schema}".push_outbox`;
      let counts = '';
      await waitFor(
        () => `every change final (${counts})`,
        async () => {
          counts = JSON.stringify(await warehouse.sql.unsafe(`select status, count(*)::int from ${t} group by 1`));
          const [r] = await warehouse.sql.unsafe(
            `select count(*)::int as n from ${t} where status not in ('applied', 'refused', 'failed')`,
          );
          if (r!.n > 0 && kills > 12) clearInterval(killer);
          return r!.n === 0;
        },
        150_000,
        500,
      );
    } finally {
      clearInterval(killer);
      for (const w of workers) w.kill('SIGTERM');
      await Promise.all(workers.map(exited));
    }
    expect(kills).toBeGreaterThan(3);
    // Each kind of fault met the writes.
    const { faults } = sandbox.stats();
    expect(faults.lost).toBeGreaterThan(10);
    expect(faults.reset).toBeGreaterThan(3);
    expect(faults.error500).toBeGreaterThan(3);

    const t = `"${warehouse.schema}".push_outbox`;
    const states = await warehouse.sql.unsafe<{ status: string; error: string | null; kind: string }[]>(
      `select status, error, kind from ${t}`,
    );
    const notApplied = states.filter((s) => s.status !== 'applied');
    expect(notApplied, JSON.stringify(notApplied.slice(0, 5))).toEqual([]);

    // By the sandbox's truth: one individual per new EmployeeNumber, the last change of each individual wins.
    const truth = sandbox.data.truth('individuals') as Individual[];
    const byEn = new Map<string, Individual[]>();
    for (const i of truth) if (i.EmployeeNumber) byEn.set(i.EmployeeNumber, [...(byEn.get(i.EmployeeNumber) ?? []), i]);
    // In intake order: an update may come before the new individual's own insert, and then the insert is the last change.
    const last = new Map<string, string>();
    for (const [push, items] of slices) {
      if (push !== pushIndividuals) continue;
      for (const it of items as Record<string, unknown>[]) last.set(String(it.EmployeeNumber), String(it.FirstName));
    }
    for (const [en, first] of last) {
      expect(byEn.get(en)?.length, en).toBe(1);
      expect(byEn.get(en)![0]!.FirstName, en).toBe(first);
    }
    // One credential per credential insert, with its holder.
    const certs = sandbox.data.truth('individualCertifications', { IncludeDeleted: true }) as IndividualCertification[];
    for (const cr of creds) {
      const mine = certs.filter((x) => x.CertificationNumber === cr.CertificationNumber);
      expect(mine.length, cr.CertificationNumber).toBe(1);
      expect(mine[0]!.ServiceId).toBe(byEn.get(cr.EmployeeNumber)![0]!.ServiceId);
    }
    // Every verified credential left the pending list; every failed one is on it, Not Verified.
    const nowPending = new Map(
      (
        sandbox.data.truth('pendingCertifications') as {
          IndividualCertificationId: number;
          VerificationStatus: string;
        }[]
      ).map((p) => [p.IndividualCertificationId, p.VerificationStatus]),
    );
    for (const id of verifiedIds) expect(nowPending.has(id)).toBe(false);
    const listed = new Set(certs.filter((x) => !x.IsDeleted).map((x) => x.IndividualCertificationId));
    const checkable = failedIds.filter((id) => listed.has(id));
    expect(checkable.length).toBeGreaterThan(50);
    for (const id of checkable) expect(nowPending.get(id), String(id)).toBe('Not Verified');

    // No SSN and no API key in clear: worker logs, every warehouse table, Redis, the outbox's stored payloads.
    const secrets = [...ssns, apiKey];
    const logs = c.logs.join('');
    expect(logs.length).toBeGreaterThan(1000);
    for (const s of secrets) expect(logs.includes(s), `logs hold ${s}`).toBe(false);
    const tables = await warehouse.sql.unsafe<{ table_name: string }[]>(
      `select table_name from information_schema.tables where table_schema = $1 and table_type = 'BASE TABLE'`,
      [warehouse.schema],
    );
    for (const { table_name } of tables) {
      const rows = await warehouse.sql.unsafe<{ t: string }[]>(
        `select x::text as t from "${warehouse.schema}"."${table_name}" x`,
      );
      const text = rows.map((r) => r.t).join('\n');
      for (const s of secrets) expect(text.includes(s), `${table_name} holds ${s}`).toBe(false);
    }
    const sealed = await warehouse.sql.unsafe(`select count(*)::int as n from ${t} where sealed is not null`);
    expect(sealed[0]!.n).toBe(0);
    const redis = new Redis(inject('redisUrl'));
    try {
      const keys = await redis.keys(`${prefix}:*`);
      if (bullmq) expect(keys.length).toBeGreaterThan(0);
      const dumped: string[] = [];
      for (const k of [...keys, ...(await redis.keys('*rl*'))]) {
        const type = await redis.type(k);
        if (type === 'string') dumped.push(String(await redis.get(k)));
        else if (type === 'hash') dumped.push(JSON.stringify(await redis.hgetall(k)));
        else if (type === 'list') dumped.push(JSON.stringify(await redis.lrange(k, 0, -1)));
        else if (type === 'zset') dumped.push(JSON.stringify(await redis.zrange(k, 0, -1)));
        else if (type === 'set') dumped.push(JSON.stringify(await redis.smembers(k)));
        else if (type === 'stream') dumped.push(JSON.stringify(await redis.xrange(k, '-', '+')));
      }
      const all = dumped.join('\n');
      for (const s of secrets) expect(all.includes(s), `Redis holds ${s}`).toBe(false);
    } finally {
      redis.disconnect();
    }
  }, 240_000);
});
