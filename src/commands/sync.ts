import { parseArgs } from 'node:util';
import { App } from '../app/index.ts';
import { Shutdown } from '../app/lifecycle.ts';
import { shownUrl } from '../warehouse/configured.ts';
import { loadConfig, unsyncedFormsNotice } from '../config.ts';
import { log } from '../log.ts';
import { redisStreamLocks } from '../locks/stream-lock.ts';
import { runStreams, selectStreams, type SyncSummary } from '../sync/runner.ts';

const HELP = `usage: wfsync sync --once [--streams a,b] [--full-refresh] [--json]

Runs the stream catalog once, in this process (no Redis needed), for every configured company. With REDIS_URL,
it shares the workers' limiter and waits for a stream a worker is reading. Ctrl-C or SIGTERM stops it after the
pages being written (exit 0; the next run goes on from their checkpoints).
  --once           required: run once and exit (scheduled runs are 'wfsync start')
  --streams a,b    only these streams (and what they depend on)
  --full-refresh   ignore checkpoints and read everything again
  --json           print the summary as JSON on stdout
`;

export async function runSyncCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      once: { type: 'boolean' },
      streams: { type: 'string' },
      'full-refresh': { type: 'boolean' },
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(HELP);
    return 0;
  }
  if (!values.once) {
    process.stderr.write(`wfsync sync: --once is required (scheduled syncs run with 'wfsync start')\n${HELP}`);
    return 2;
  }
  const selected = selectStreams(
    values.streams
      ?.split(',')
      .map((s) => s.trim())
      .filter(Boolean),
  );
  const app = new App(loadConfig(), log);
  const shutdown = new Shutdown(app);
  const summaries: SyncSummary[] = [];
  let warehouse = '';
  try {
    const env = await app.environment();
    warehouse = `warehouse: psql '${shownUrl(app.config, env.warehouse)}'   (schema ${app.config.dbSchema})\n`;
    const board = app.progress(true);
    // With Redis, a run by hand takes each stream as the workers do, so it never reads one beside a worker's run.
    const locks = app.config.redisUrl
      ? redisStreamLocks(await app.redis(), { holder: `sync-once:${process.pid}`, ttlMs: app.config.jobLockMs })
      : undefined;
    for (const ctx of env.contexts) {
      if (shutdown.signal.aborted) break;
      const signal = ctx.signal ? AbortSignal.any([ctx.signal, shutdown.signal]) : shutdown.signal;
      summaries.push(await runStreams({ ...ctx, signal }, selected, { fullRefresh: values['full-refresh'], locks }));
    }
    board.clear();
  } finally {
    await shutdown.stop();
  }
  // Where the rows went, and what was left out, close the summary: a run that fails early prints one line only.
  const unsynced = unsyncedFormsNotice(app.config);
  app.console.write(`${formatSummaries(summaries)}${warehouse}${unsynced ? `${unsynced}\n` : ''}`);
  // Only the summary goes to stdout: `sync --once --json > out.json` is valid JSON.
  if (values.json)
    process.stdout.write(`${JSON.stringify(summaries.length === 1 ? summaries[0] : summaries, null, 2)}\n`);
  return summaries.some((s) => s.failed > 0) ? 1 : 0;
}

export function formatSummaries(summaries: SyncSummary[]): string {
  const lines: string[] = [];
  for (const s of summaries) {
    lines.push(
      `\ncompany ${s.companyKey}: ${s.rows} rows, ${s.requests} requests, ${s.rejects} rejects, ${(s.durationMs / 1000).toFixed(1)} s`,
    );
    lines.push(
      `  ${'stream'.padEnd(32)} ${'rows'.padStart(9)} ${'requests'.padStart(9)} ${'rejects'.padStart(8)} ${'deleted'.padStart(8)}  outcome`,
    );
    for (const o of s.streams) {
      lines.push(
        `  ${o.stream.padEnd(32)} ${String(o.rows).padStart(9)} ${String(o.requests).padStart(9)} ${String(o.rejects).padStart(8)} ${String(o.deleted).padStart(8)}  ${o.outcome}${o.error ? `: ${o.error}` : ''}`,
      );
    }
  }
  return `${lines.join('\n')}\n`;
}
