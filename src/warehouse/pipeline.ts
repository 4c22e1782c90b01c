import type { Sql, TransactionSql } from 'postgres';

export type Tx = Sql | TransactionSql;
export type ResultRows = Record<string, unknown>[];

/** One prepared statement; every value travels as text. */
export async function exec(tx: Tx, query: string, params: readonly unknown[]): Promise<ResultRows> {
  return (await tx.unsafe(query, params as never[], { prepare: true })) as unknown as ResultRows;
}

/**
 * Statements of one transaction sent one after another without waiting for each answer: postgres.js writes each
 * to the connection at once, Postgres runs them in order, and the page pays one round trip instead of one per
 * statement. A failed statement fails the ones after it (the transaction is aborted), so `flush` reports the
 * first failure, which is the cause.
 */
export class Pipeline {
  private pending: Promise<ResultRows>[] = [];

  constructor(readonly tx: Tx) {}

  send(query: string, params: readonly unknown[]): void {
    const p = exec(this.tx, query, params);
    // Settled by flush; until then a rejection is not unhandled.
    p.catch(() => {});
    this.pending.push(p);
  }

  /** Waits for everything sent, then runs `step` alone: a read whose answer decides what comes next, or a COPY
   * (postgres.js refuses other statements on a connection while a COPY runs). */
  async alone<T>(step: () => Promise<T>): Promise<T> {
    await this.flush();
    return step();
  }

  async flush(): Promise<void> {
    const sent = this.pending;
    this.pending = [];
    const results = await Promise.allSettled(sent);
    const failed = results.find((r) => r.status === 'rejected');
    if (failed) throw failed.reason;
  }
}

/**
 * Runs `fn` in one transaction on a connection of its own. BEGIN goes out with the first statement and COMMIT
 * with the last (`fn` flushes what it must read), so a transaction costs no round trip of its own. Any failure
 * rolls back before the connection returns to the pool.
 */
export async function transaction<T>(sql: Sql, fn: (pipe: Pipeline) => Promise<T>): Promise<T> {
  const conn = await sql.reserve();
  try {
    const pipe = new Pipeline(conn);
    pipe.send('begin', []);
    try {
      const result = await fn(pipe);
      pipe.send('commit', []);
      await pipe.flush();
      return result;
    } catch (e) {
      // Outside a transaction (COMMIT failed) ROLLBACK only warns.
      await conn.unsafe('rollback').catch(() => {});
      throw e;
    }
  } finally {
    conn.release();
  }
}
