import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sql } from 'postgres';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.ts';
import { streams } from '../../src/resources/index.ts';
import { emptyCounters, type StreamRun } from '../../src/sync/context.ts';
import { streamRun } from '../../src/sync/engine.ts';
import { runStreams, selectStreams } from '../../src/sync/runner.ts';
import { markGone, seenIn } from '../../src/sync/seen.ts';
import { readRows } from '../support/rows.ts';
import type { Warehouse } from '../../src/warehouse/connection.ts';
import { keyText } from '../../src/warehouse/record-keys.ts';
import { openTestSync, type TestSync } from '../support/sync-context.ts';

/**
 * A complete read marks gone the rows of its scope it did not return. One that began on an empty scope (a first
 * sync) has nothing to mark, and does not read back the rows it wrote to find that out.
 */

let sandbox: RunningSandbox;
let sync: TestSync;
const individuals = streams.find((s) => s.name === 'individuals')!;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, seed: 4, size: 'tiny', rateLimit: null });
  sync = await openTestSync(sandbox);
  expect((await runStreams(sync.ctx, selectStreams(['individuals']))).failed).toBe(0);
});

afterAll(async () => {
  await sync?.close();
  await sandbox?.close();
});

/** The warehouse as `company` sees it, with every statement sent through its client kept in `sent`. */
function watched(sent: string[]): Warehouse {
  const sql = new Proxy(sync.warehouse.sql, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target) as unknown;
      if (prop !== 'unsafe') return value;
      return (query: string, ...rest: unknown[]) => {
        sent.push(query);
        return (value as (...a: unknown[]) => unknown).call(target, query, ...rest);
      };
    },
  }) as Sql;
  return new Proxy(sync.warehouse, {
    get: (target, prop) => (prop === 'sql' ? sql : Reflect.get(target, prop, target)),
  });
}

function runOf(company: string, sent: string[] = []): StreamRun {
  return streamRun({
    ctx: { ...sync.ctx, companyKey: company, warehouse: watched(sent) },
    stream: individuals,
    partition: { key: '-', query: {} },
    counters: emptyCounters(),
    opts: {},
  });
}

const live = async (company: string) =>
  (await readRows(sync.warehouse, 'individuals', company)).filter((r) => r._deleted_at === null);

/** Writes one of `from`'s individuals as `to`'s, as a read running beside another would. */
async function copyIndividual(from: string, to: string): Promise<void> {
  const { sql, schema } = sync.warehouse;
  await sql.unsafe(
    `insert into "${schema}".individuals
     select (jsonb_populate_record(null::"${schema}".individuals, to_jsonb(r) || jsonb_build_object('company_key', $2::text))).*
     from "${schema}".individuals r where company_key = $1 limit 1`,
    [from, to],
  );
}

describe('deletion inference of a complete read', () => {
  it('a read begun on an empty scope marks nothing gone and reads nothing back, even a row written beside it', async () => {
    const sent: string[] = [];
    const run = runOf('beta', sent);
    const seen = await seenIn(run);
    expect(seen.storedBefore).toBe(false);
    await copyIndividual('acme', 'beta');
    sent.length = 0;
    await markGone(run, seen, { label: 'complete read' });
    expect(run.counters.deleted).toBe(0);
    expect(sent).toEqual([]);
    expect(await live('beta')).toHaveLength(1);
  });

  it('a read begun with rows in its scope marks gone the one it did not return', async () => {
    const before = await live('acme');
    const run = runOf('acme');
    const seen = await seenIn(run);
    expect(seen.storedBefore).toBe(true);
    for (const row of before.slice(1)) seen.keys.add(keyText(row, individuals.target.key));
    await markGone(run, seen, { label: 'complete read' });
    expect(run.counters.deleted).toBe(1);
    expect((await live('acme')).map((r) => r.service_id)).toEqual(before.slice(1).map((r) => r.service_id));
  });
});
