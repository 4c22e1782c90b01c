import { describe, expect, it } from 'vitest';
import { connect } from '../../src/warehouse/connection.ts';
import { migrateWarehouse } from '../../src/warehouse/migrate.ts';
import { freshDatabase } from '../support/db.ts';
import { freePort } from '../support/services.ts';

describe('warehouse connections', () => {
  it('negotiate SSL (sslmode=prefer on a server without it)', async () => {
    const sql = connect(`${await freshDatabase()}?sslmode=prefer`, 1);
    try {
      expect(await sql`select 1 as one`).toEqual([{ one: 1 }]);
    } finally {
      await sql.end();
    }
  });

  it("reach the server by its Unix socket when the URL's host parameter names a directory, as libpq does", async () => {
    const url = new URL(await freshDatabase());
    url.hostname = 'localhost';
    url.searchParams.set('host', '/tmp');
    await migrateWarehouse(url.toString(), 'socket_test');
    const sql = connect(url.toString(), 1);
    try {
      const [row] =
        await sql`select inet_server_addr() is null as unix, to_regclass('socket_test.individuals') is not null as migrated`;
      expect(row).toEqual({ unix: true, migrated: true });
    } finally {
      await sql.end();
    }
  });

  it('report a refused connection', async () => {
    const sql = connect(`postgres://nobody@127.0.0.1:${await freePort()}/none`, 1);
    try {
      await expect(sql`select 1`).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    } finally {
      await sql.end();
    }
  });

  it('keep refusing promptly while the server stays away, however many connections have failed', async () => {
    const sql = connect(`postgres://nobody@127.0.0.1:${await freePort()}/none`, 1);
    try {
      const started = Date.now();
      // postgres.js alone waits 3^n / 100 s (up to 20 s) before its n-th attempt: the tenth would come after 30 s.
      for (let i = 0; i < 10; i++) await expect(sql`select 1`).rejects.toMatchObject({ code: 'ECONNREFUSED' });
      expect(Date.now() - started).toBeLessThan(10_000);
    } finally {
      await sql.end();
    }
  }, 60_000);
});
