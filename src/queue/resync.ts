import { isStreamName, type StreamName } from '../resources/index.ts';
import type { SyncSummary } from '../sync/runner.ts';
import type { Warehouse } from '../warehouse/connection.ts';
import { claimResyncs, finishResyncs, openResyncs } from '../warehouse/resyncs.ts';
import type { Logger } from 'pino';
import type { JobDef } from './job.ts';

/**
 * A re-sync of one stream is a job of its own name, run like any other (through the queue under the stream's lock,
 * or by the running start's in-process runner): a complete read from the start, checkpoints ignored. The rows
 * already written stay readable throughout; the read's end infers what the service no longer has.
 */

const PREFIX = 'resync-';

export function resyncJob(stream: StreamName): JobDef {
  return {
    name: `${PREFIX}${stream}`,
    cron: '',
    streams: [stream],
    fullRefresh: true,
    description: `${stream} read again from the start`,
  };
}

/** The stream a job re-syncs, if it is a re-sync. */
export function resyncedStream(jobName: string): StreamName | undefined {
  const stream = jobName.startsWith(PREFIX) ? jobName.slice(PREFIX.length) : undefined;
  return stream !== undefined && isStreamName(stream) ? stream : undefined;
}

/**
 * Runs `read` as the re-sync of the job's stream: its open requests are claimed first and closed with what the
 * read did. A job that is no re-sync is just run.
 */
export async function asResync(
  wh: Warehouse,
  company: string,
  jobName: string,
  read: () => Promise<SyncSummary>,
): Promise<SyncSummary> {
  const stream = resyncedStream(jobName);
  if (!stream) return read();
  const ids = await claimResyncs(wh, company, stream);
  // Asked once, queued twice (a second ask while the first waited): the first run took every request.
  if (ids.length === 0)
    return {
      companyKey: company,
      streams: [],
      requests: 0,
      rows: 0,
      rejects: 0,
      failed: 0,
      interrupted: 0,
      durationMs: 0,
    };
  let summary: SyncSummary | undefined;
  try {
    summary = await read();
    return summary;
  } finally {
    const s = summary?.streams.find((o) => o.stream === stream);
    await finishResyncs(
      wh,
      company,
      stream,
      ids,
      s
        ? { outcome: s.outcome, rows: s.rows, deleted: s.deleted, ...(s.error ? { error: s.error.slice(0, 500) } : {}) }
        : { outcome: 'failed', error: 'the run ended without a summary' },
    );
  }
}

/** How often the running start (no Redis) looks for re-syncs asked for elsewhere (the CLI, another server). */
export const RESYNC_POLL_MS = 2_000;

/**
 * Without a queue, the running start takes the re-syncs asked for: each open request's stream is run by `run`
 * (the in-process runner), one at a time per stream. Answers a stop function.
 */
export function pickUpResyncs(
  wh: Warehouse,
  run: (company: string, job: JobDef) => Promise<unknown>,
  log: Logger,
  everyMs = RESYNC_POLL_MS,
): () => void {
  const going = new Set<string>();
  const look = async () => {
    for (const r of await openResyncs(wh)) {
      const key = `${r.company}/${r.stream}`;
      if (going.has(key) || !isStreamName(r.stream)) continue;
      going.add(key);
      void run(r.company, resyncJob(r.stream))
        .catch((err: unknown) => log.error({ err, company: r.company, stream: r.stream }, 're-sync failed'))
        .finally(() => going.delete(key));
    }
  };
  const timer = setInterval(
    () => void look().catch((err: unknown) => log.warn({ err }, 'could not read the re-sync requests')),
    everyMs,
  );
  timer.unref();
  return () => clearInterval(timer);
}
