import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openWarehouse } from '../../src/warehouse/connection.ts';
import { readRows } from '../support/rows.ts';
import { targets } from '../../src/resources/index.ts';
import { writePage } from '../../src/warehouse/upsert.ts';
import { VIEW_NAMES } from '../../src/warehouse/descriptions.ts';
import { warehouseTables } from '../../src/warehouse/schema.ts';
import { getTableName } from 'drizzle-orm';
import { freshDatabase } from '../support/db.ts';
import { parsed } from './fixtures.ts';

async function relations(url: string, schema: string) {
  const wh = await openWarehouse({ databaseUrl: url, schema });
  try {
    return await wh.sql<{ name: string; kind: string }[]>`
      select c.relname as name, c.relkind as kind from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = ${schema} and c.relkind in ('r', 'v') order by 1`;
  } finally {
    await wh.close();
  }
}

describe('migrations', () => {
  it('apply twice, and concurrently, without error or change', async () => {
    const url = await freshDatabase();
    const [a, b] = [await openWarehouse({ databaseUrl: url }), await openWarehouse({ databaseUrl: url })];
    try {
      await Promise.all([a.migrate(), b.migrate()]);
      const first = await relations(url, 'workforce');
      await a.migrate();
      expect(await relations(url, 'workforce')).toEqual(first);
      expect(
        first
          .filter((r) => r.kind === 'v')
          .map((r) => r.name)
          .sort(),
      ).toEqual([...VIEW_NAMES].sort());
      const tables = Object.values(warehouseTables('workforce'))
        .map((t) => getTableName(t))
        .sort();
      expect(first.filter((r) => r.kind === 'r').map((r) => r.name)).toEqual(tables);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('apply under a non-default schema, beside the default one', async () => {
    const url = await freshDatabase();
    const other = await openWarehouse({ databaseUrl: url, schema: 'wf_other' });
    const main = await openWarehouse({ databaseUrl: url });
    try {
      await other.migrate();
      await main.migrate();
      await other.migrate();
      expect(await relations(url, 'wf_other')).toEqual(await relations(url, 'workforce'));
      await writePage(other, {
        target: targets.individuals,
        companyKey: 'c',
        items: [parsed('individuals')],
        syncedAt: new Date(),
        stream: 'i',
      });
      expect(await readRows(other, targets.individuals, 'c')).toHaveLength(1);
      expect(await readRows(main, targets.individuals, 'c')).toHaveLength(0);
      const [view] = await other.sql`select count(*)::int as n from wf_other.v_form_answers`;
      expect(view!.n).toBe(0);
    } finally {
      await Promise.all([other.close(), main.close()]);
    }
  });

  it('leave a COMMENT on every table, view and column', async () => {
    const wh = await openWarehouse({ databaseUrl: await freshDatabase() });
    try {
      await wh.migrate();
      const missing = await wh.sql<{ name: string }[]>`
        select c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
        where n.nspname = 'workforce' and c.relkind in ('r', 'v') and obj_description(c.oid, 'pg_class') is null
        union all
        select c.relname || '.' || a.attname from pg_attribute a
        join pg_class c on c.oid = a.attrelid join pg_namespace n on n.oid = c.relnamespace
        where n.nspname = 'workforce' and c.relkind in ('r', 'v') and a.attnum > 0 and not a.attisdropped
          and col_description(c.oid, a.attnum) is null`;
      expect(missing.map((m) => m.name)).toEqual([]);
    } finally {
      await wh.close();
    }
  });

  it('refuse an SSN in the push outbox', async () => {
    const wh = await openWarehouse({ databaseUrl: await freshDatabase() });
    try {
      await wh.migrate();
      const insert = (changeId: string, payload: unknown) =>
        wh.sql`insert into workforce.push_outbox (company_key, kind, change_id, entity_key, seq, payload)
               values ('c', 'individual', ${changeId}, 'en:1', 1, ${wh.sql.json(payload as never)})`;
      await insert('a', { FirstName: 'A' });
      await expect(insert('b', { Individual: { ssn: '123456789' } })).rejects.toThrow(
        /push_outbox_payload_without_ssn/,
      );
    } finally {
      await wh.close();
    }
  });
});

describe('embedded Postgres', () => {
  it('starts under <dataDir>/pg, is reused by the next open, and stops on close', async () => {
    const parent = mkdtempSync(join(tmpdir(), 'wfsync-embedded-'));
    chmodSync(parent, 0o755);
    const dataDir = join(parent, 'nested', '.wfsync');
    try {
      const first = await openWarehouse({ dataDir });
      await first.migrate();
      await writePage(first, {
        target: targets.locales,
        companyKey: 'c',
        items: [parsed('locales')],
        syncedAt: new Date(),
        stream: 'l',
      });
      expect(first.url).toMatch(/^postgres:\/\/.+\/wfsync$/);
      await first.close();
      expect(existsSync(join(dataDir, 'pg', 'PG_VERSION'))).toBe(true);
      const stopped = await import('postgres').then((m) =>
        m.default(first.url, { max: 1, connect_timeout: 2, onnotice: () => {} }),
      );
      await expect(stopped`select 1`).rejects.toThrow();
      await stopped.end();

      const second = await openWarehouse({ dataDir });
      try {
        await second.migrate();
        expect(await readRows(second, targets.locales, 'c')).toHaveLength(1);
      } finally {
        await second.close();
      }
    } finally {
      rmSync(parent, { recursive: true, force: true });
    }
  });

  // Ctrl-C in a terminal signals the whole process group, Postgres included, before close() runs.
  it('closes when Postgres was already signalled to stop', async () => {
    const parent = mkdtempSync(join(tmpdir(), 'wfsync-embedded-'));
    chmodSync(parent, 0o755);
    const dataDir = join(parent, '.wfsync');
    try {
      const wh = await openWarehouse({ dataDir });
      const pid = Number(readFileSync(join(dataDir, 'pg', 'postmaster.pid'), 'utf8').split('\n')[0]);
      process.kill(pid, 'SIGINT');
      await new Promise((r) => setTimeout(r, 1500));
      const closed = await Promise.race([
        wh.close().then(() => 'closed'),
        new Promise((r) => setTimeout(() => r('hung'), 15_000)),
      ]);
      expect(closed).toBe('closed');
      expect(() => process.kill(pid, 0)).toThrow();
    } finally {
      rmSync(parent, { recursive: true, force: true });
    }
  });
});
