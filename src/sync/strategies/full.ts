/** A list read whole every run: what it does not return is gone. */
import type { StreamRun } from '../context.ts';
import { readAll } from '../read.ts';
import { seenIn, markGone } from '../seen.ts';

export async function runFull(run: StreamRun): Promise<void> {
  const seen = await seenIn(run);
  await readAll(run, {}, 'incremental', { seen });
  await markGone(run, seen, { label: 'complete read' });
}
