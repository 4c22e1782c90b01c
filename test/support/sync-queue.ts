import type { Queue, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { feedRuns, finishJob } from '../../src/queue/feeder.ts';
import { DUE_KEY, FED_KEY, LATER_KEY, QUEUED_KEY, RUNS_KEY } from '../../src/queue/scripts.ts';
import { taken, type SyncJobData } from '../../src/queue/sync-queue.ts';

/** Empties the sync queue: BullMQ's jobs and the runs queued under the queue's own keys. */
export async function emptySyncQueue(queue: Queue<SyncJobData>, connection: Redis): Promise<void> {
  await queue.obliterate({ force: true });
  await connection.del(DUE_KEY, RUNS_KEY, LATER_KEY, FED_KEY, QUEUED_KEY);
}

/**
 * What a worker with one free slot does, until nothing is left to give out: takes the next run given out, records
 * its take, completes it, and lets its company's job be given out again. Answers the runs taken, in order.
 */
export async function takeAll(
  queue: Queue<SyncJobData>,
  connection: Redis,
  taker: Worker<SyncJobData>,
): Promise<SyncJobData[]> {
  const takes: SyncJobData[] = [];
  for (;;) {
    const next = await takeOne(queue, connection, taker);
    if (!next) return takes;
    takes.push(next);
  }
}

/** One run given out and taken, as `takeAll`; undefined when nothing is due. */
export async function takeOne(
  queue: Queue<SyncJobData>,
  connection: Redis,
  taker: Worker<SyncJobData>,
): Promise<SyncJobData | undefined> {
  if ((await feedRuns(queue, connection, 1)).length === 0) return undefined;
  const job = (await taker.getNextJob('token', { block: false }))!;
  await taken(connection, job.data);
  await job.moveToCompleted('done', 'token', false);
  await finishJob(connection, job.id!, job.data);
  return job.data;
}
