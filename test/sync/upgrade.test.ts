import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ZodType } from 'zod';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.ts';
import {
  ChangeCursor,
  CURSOR_VERSION,
  readStoredCursor,
  SinceCursor,
  SnapshotCursor,
  StatusCursor,
  WindowCursor,
} from '../../src/sync/cursors.ts';
import { runStreams, selectStreams, type SyncSummary } from '../../src/sync/runner.ts';
import { streamByName } from '../../src/resources/index.ts';
import { listCheckpoints } from '../../src/warehouse/state.ts';
import { MIGRATIONS_DIR, migrationsTable } from '../../src/warehouse/migrate.ts';
import { DEFAULT_SCHEMA } from '../../src/warehouse/schema.ts';
import { divergence, dueForComparison, spansWithinBound, summarizeDivergence } from '../support/convergence.ts';
import { freshDatabase } from '../support/db.ts';
import { openTestSync, type TestSync } from '../support/sync-context.ts';
import { loadFixture, restoreWarehouse } from '../support/warehouse-fixture.ts';

/**
 * A warehouse written by the previous release (0.1.0, made by test/support/make-upgrade-fixture.ts), upgraded:
 * the new release migrates it, and its next sync after a few hours of changes goes on from the stored cursors.
 */

const fixture = loadFixture(fileURLToPath(new URL('../fixtures/warehouse-0.1.0.json.gz', import.meta.url)));
const company = fixture.companyKey;
/** Hours the service's clock moves on between the release's sync and the upgraded one. */
const HOURS = 6;
/** What the release's own first sync sent: a backfill of every stream. */
const backfillRequests = fixture.tables.sync_runs!.reduce((n, r) => n + Number(r.requests), 0);

/** The cursor format of each kind of stream. */
const cursorSchemas = {
  'updated-since': SinceCursor,
  windowed: WindowCursor,
  'change-driven': ChangeCursor,
  'status-driven': StatusCursor,
  snapshot: SnapshotCursor,
};
const schemaOf = (stream: unknown): ZodType<unknown> =>
  cursorSchemas[streamByName(String(stream))!.strategy.kind as keyof typeof cursorSchemas];

let sandbox: RunningSandbox;
let databaseUrl: string;
let sync: TestSync | undefined;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, ...fixture.sandbox, now: new Date(fixture.sandbox.now), rateLimit: null });
  databaseUrl = await freshDatabase();
  await restoreWarehouse(databaseUrl, fixture);
});

afterAll(async () => {
  await sync?.close();
  await sandbox?.close();
});

describe('a warehouse written by release 0.1.0', () => {
  it('holds cursors of the previous format, each of which migrates to this one', () => {
    expect(backfillRequests).toBeGreaterThan(100);
    const stored = fixture.tables.sync_state!;
    expect(stored.length).toBeGreaterThan(10);
    for (const { stream, cursor } of stored) {
      expect((cursor as { version: number }).version).toBe(2);
      expect(readStoredCursor(schemaOf(stream), cursor), String(stream)).toMatchObject({
        ok: true,
        migratedFrom: 2,
        cursor: { version: CURSOR_VERSION },
      });
    }
  });

  describe('upgraded', () => {
    let summary: SyncSummary;

    beforeAll(async () => {
      sync = await openTestSync(sandbox, { databaseUrl, companyKey: company });
      // The warehouse as written is the service's truth at the release's clock, before anything changed.
      expect(summarizeDivergence(await divergence(sync.warehouse, sandbox.data, company))).toEqual({});
      sandbox.data.advance(HOURS);
      summary = await runStreams(sync.ctx, selectStreams());
    }, 300_000);

    it('has every migration of this release applied', async () => {
      const { sql } = sync!.warehouse;
      const journal = JSON.parse(readFileSync(`${MIGRATIONS_DIR}/meta/_journal.json`, 'utf8')) as {
        entries: unknown[];
      };
      const [applied] = await sql<
        { n: number }[]
      >`select count(*)::int as n from drizzle.${sql(migrationsTable(DEFAULT_SCHEMA))}`;
      expect(applied!.n).toBe(journal.entries.length);
      expect(applied!.n).toBeGreaterThan(fixture.migrationHashes.length);
    });

    it('syncs incrementally from the migrated cursors, failing no stream and restarting none', () => {
      expect(summary.streams.filter((s) => s.outcome !== 'ok').map((s) => [s.stream, s.error])).toEqual([]);
      expect(summary.streams.flatMap((s) => s.cursorsRestarted)).toEqual([]);
      console.info(JSON.stringify({ backfillRequests, upgradedSyncRequests: summary.requests }));
      expect(summary.requests).toBeLessThan(backfillRequests / 3);
    });

    it('stores every cursor in the current format', async () => {
      const checkpoints = await listCheckpoints(sync!.warehouse, company);
      expect(checkpoints.length).toBe(fixture.tables.sync_state!.length);
      expect(
        checkpoints
          .filter((c) => (c.cursor as { version: number } | null)?.version !== CURSOR_VERSION)
          .map((c) => c.stream),
      ).toEqual([]);
    });

    it('converges with the service within each stream’s bound', async () => {
      // Snapshot deletions are confirmed by a second read.
      await runStreams(sync!.ctx, selectStreams(['pending-certifications', 'required-certification-status']));
      const spans = spansWithinBound(HOURS, summary.streams, sandbox.data.now());
      const due = dueForComparison(HOURS, summary.streams);
      const d = await divergence(sync!.warehouse, sandbox.data, company, spans);
      const compared = Object.fromEntries(Object.entries(d).filter(([name]) => due.has(name) || name in spans));
      expect(Object.keys(compared).length).toBeGreaterThan(10);
      expect(summarizeDivergence(compared)).toEqual({});
    });
  });
});
