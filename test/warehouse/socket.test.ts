import { Socket } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { connect } from '../../src/warehouse/connection.ts';
import { freshDatabase } from '../support/db.ts';
import { freePort } from '../support/services.ts';

afterEach(() => {
  vi.restoreAllMocks();
});

describe('warehouse connections', () => {
  it('turn Nagle off (TCP_NODELAY) on their sockets', async () => {
    const noDelay = vi.spyOn(Socket.prototype, 'setNoDelay');
    const sql = connect(await freshDatabase(), 1);
    try {
      expect(await sql`select 1 as one`).toEqual([{ one: 1 }]);
    } finally {
      await sql.end();
    }
    expect(noDelay).toHaveBeenCalledWith(true);
  });

  it('still negotiate SSL on the socket they connect (sslmode=prefer on a server without it)', async () => {
    const sql = connect(`${await freshDatabase()}?sslmode=prefer`, 1);
    try {
      expect(await sql`select 1 as one`).toEqual([{ one: 1 }]);
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
});
