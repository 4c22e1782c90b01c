import type { Sql, TransactionSql } from 'postgres';
import { ConnectionLostError, isConnectionError } from './outage.ts';

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

  /** Waits for everything sent, then runs `step` alone: a read whose answer decides what comes next. */
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
 * One database session at a time per client: a postgres.js client of one connection, leased to one transaction.
 *
 * postgres.js's own `reserve()` and `begin()` hand back a connection that may have closed under them (a Postgres
 * restart): the ROLLBACK they then send, or the next query on a released dead connection, is written to a socket
 * that is gone and throws `Cannot read properties of null (reading 'write')` from a timer, which no caller can
 * catch (porsager/postgres#1066, #1154). Through a client's own queue a closed connection is connected again
 * instead; what the transaction must know is that its session ended, which `generation` tells.
 */
export interface Session {
  /** The client; every statement through it must check `alive` first (see `guarded`). */
  readonly sql: Sql;
  /** Bumped each time the client's connection closes. */
  readonly generation: () => number;
  /** Calls `listener` each time the client's connection closes, until the returned function is called. */
  readonly onClose: (listener: () => void) => () => void;
}

export interface Sessions {
  lease(): Promise<Session>;
  release(s: Session): void;
  end(): Promise<void>;
}

/**
 * Up to `size` sessions, each made on first need by `open`, which must call `onclose` whenever its connection
 * closes.
 */
export function sessionPool(open: (onclose: () => void) => Sql, size: number): Sessions {
  const idle: Session[] = [];
  const all: Session[] = [];
  const waiting: ((s: Session) => void)[] = [];
  const make = (): Session => {
    let generation = 0;
    const listeners = new Set<() => void>();
    const sql = open(() => {
      generation++;
      for (const l of [...listeners]) l();
    });
    const onClose = (listener: () => void) => {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    };
    const s = { sql, generation: () => generation, onClose };
    all.push(s);
    return s;
  };
  return {
    lease: async () => idle.pop() ?? (all.length < size ? make() : new Promise<Session>((r) => waiting.push(r))),
    release: (s) => {
      const next = waiting.shift();
      if (next) next(s);
      else idle.push(s);
    },
    end: async () => {
      await Promise.all(all.map((s) => s.sql.end({ timeout: 5 })));
    },
  };
}

/**
 * The client of a session, refusing every statement once the connection it began on has closed: sent to the
 * client's next connection, it would run outside the transaction (and a COMMIT there commits nothing).
 */
function guarded(session: Session, begunOn: number): Sql {
  const check = () => {
    if (session.generation() !== begunOn)
      throw new ConnectionLostError('the warehouse connection closed during the transaction');
  };
  const sql = session.sql;
  return new Proxy(sql, {
    apply(target, self, args) {
      check();
      return Reflect.apply(target as never, self, args);
    },
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      if (prop !== 'unsafe' || typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        check();
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}

/**
 * Fails once the session's connection closes after `begunOn`: what the transaction still waits for then can
 * never be answered by that connection. The page fails at the close, whatever postgres.js does with the
 * statements it still held (3.4.x has known faults across a server restart), instead of waiting for good with
 * its session.
 */
function lostSession(session: Session, begunOn: number): { lost: Promise<never>; stop: () => void } {
  let stop = () => {};
  const lost = new Promise<never>((_, reject) => {
    const fail = () => reject(new ConnectionLostError('the warehouse connection closed during the transaction'));
    if (session.generation() !== begunOn) return fail();
    stop = session.onClose(fail);
  });
  // Settled by the race in `transaction`; after the transaction ended no one waits for it.
  lost.catch(() => {});
  return { lost, stop };
}

/**
 * Runs `fn` in one transaction on a session of its own. BEGIN goes out with the first statement and COMMIT
 * with the last (`fn` flushes what it must read), so a transaction costs no round trip of its own. Any failure
 * rolls back before the session returns to the pool; a session whose connection closed needs none (Postgres
 * rolled it back), and the transaction fails with a ConnectionLostError or the driver's connection error as
 * soon as the connection closes, whatever statement it waited for.
 */
export async function transaction<T>(sessions: Sessions, fn: (pipe: Pipeline) => Promise<T>): Promise<T> {
  const session = await sessions.lease();
  const begunOn = session.generation();
  const { lost, stop } = lostSession(session, begunOn);
  try {
    const pipe = new Pipeline(guarded(session, begunOn));
    pipe.send('begin', []);
    const run = async () => {
      const result = await fn(pipe);
      pipe.send('commit', []);
      await pipe.flush();
      return result;
    };
    try {
      return await Promise.race([run(), lost]);
    } catch (e) {
      // Outside a transaction (COMMIT failed) ROLLBACK only warns; on a new connection there is nothing to undo.
      // A connection that failed (reset, closed) took its transaction with it: a ROLLBACK sent after it is never
      // answered when postgres.js connects again without telling `onclose` (a reset while it was still setting
      // the connection up), and would hold the page and its session for good.
      if (session.generation() === begunOn && !isConnectionError(e))
        await session.sql.unsafe('rollback').catch(() => {});
      throw e;
    }
  } finally {
    stop();
    sessions.release(session);
  }
}
