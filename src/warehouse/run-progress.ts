import type { Warehouse } from './connection.ts';
import type { ProgressEvent } from '../observers.ts';

/** A running run's progress as stored in `sync_runs.details.progress`: where it stood at `at`. */
export type StoredProgress = Omit<ProgressEvent, 'company' | 'stream'> & { at: string };

/**
 * Stores where a running run stands, in its `sync_runs` row, for `status` (another process) to read. A run
 * that ended keeps none: its row says what it did.
 */
export async function storeRunProgress(wh: Warehouse, runId: number, progress: StoredProgress): Promise<void> {
  await wh.sql`
    update ${wh.sql(wh.schema)}.sync_runs
    set details = jsonb_set(coalesce(details, '{}'::jsonb), '{progress}', ${wh.sql.json(progress)})
    where id = ${runId} and finished_at is null`;
}
