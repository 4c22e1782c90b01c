import { startSandbox, type RunningSandbox, type SandboxSize } from '../../src/sandbox/index.ts';
import type { Quirk } from '../../src/sandbox/index.ts';
import { runStreams, selectStreams } from '../../src/sync/runner.ts';
import { openTestSync, type TestSync } from './sync-context.ts';

export interface SyncedWarehouse {
  sandbox: RunningSandbox;
  sync: TestSync;
  close(): Promise<void>;
}

/**
 * The sandbox at `size` synced whole (every stream, budget out of the way) into a fresh warehouse, then ANALYZEd,
 * as an analyst would find it after a first sync.
 */
export async function syncedWarehouse(o: {
  size: SandboxSize;
  seed?: number;
  quirks?: readonly Quirk[];
}): Promise<SyncedWarehouse> {
  const sandbox = await startSandbox({ port: 0, seed: o.seed ?? 3, size: o.size, rateLimit: null, quirks: o.quirks });
  const sync = await openTestSync(sandbox, { rateLimit: { limit: 100_000, periodMs: 1000 } });
  const summary = await runStreams(sync.ctx, selectStreams());
  if (summary.failed > 0)
    throw new Error(`the first sync failed: ${JSON.stringify(summary.streams.filter((s) => s.outcome !== 'ok'))}`);
  await sync.warehouse.sql.unsafe('analyze');
  return {
    sandbox,
    sync,
    close: async () => {
      await sync.close();
      await sandbox.close();
    },
  };
}
