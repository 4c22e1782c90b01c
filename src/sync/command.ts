import { parseArgs } from 'node:util';
import { loadConfig, unsyncedFormsNotice } from '../config.ts';
import { log } from '../log.ts';
import { openEnvironment, shownUrl } from './environment.ts';
import { runStreams, selectStreams, type SyncSummary } from './runner.ts';
import type { Progress } from './engine.ts';

const HELP = `usage: wfsync sync --once [--streams a,b] [--full-refresh] [--json]

Runs the stream catalog once, in this process (no Redis needed), for every configured company.
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
  const selected = selectStreams(values.streams?.split(',').map((s) => s.trim()).filter(Boolean));
  const config = loadConfig();
  const env = await openEnvironment(config, log);
  const progress = progressPrinter();
  const summaries: SyncSummary[] = [];
  try {
    for (const ctx of env.contexts) {
      summaries.push(
        await runStreams({ ...ctx, onProgress: progress }, selected, { fullRefresh: values['full-refresh'] }),
      );
    }
  } finally {
    await env.close();
  }
  // Where the rows went, and what was left out, close the summary: a run that fails early prints one line only.
  const unsynced = unsyncedFormsNotice(config);
  process.stderr.write(
    `${formatSummaries(summaries)}warehouse: psql '${shownUrl(config, env)}'   (schema ${config.dbSchema})\n${unsynced ? `${unsynced}\n` : ''}`,
  );
  if (values.json) process.stdout.write(`${JSON.stringify(summaries.length === 1 ? summaries[0] : summaries, null, 2)}\n`);
  return summaries.some((s) => s.failed > 0) ? 1 : 0;
}

/** One line per stream on stderr, at most every half second each. */
export function progressPrinter(): (p: Progress) => void {
  const last = new Map<string, number>();
  return (p) => {
    const now = Date.now();
    if (now - (last.get(p.stream) ?? 0) < 500) return;
    last.set(p.stream, now);
    process.stderr.write(`  ${p.stream.padEnd(32)} ${String(p.rows).padStart(9)} rows  ${String(p.requests).padStart(6)} requests\n`);
  };
}

export function formatSummaries(summaries: SyncSummary[]): string {
  const lines: string[] = [];
  for (const s of summaries) {
    lines.push(`\ncompany ${s.companyKey}: ${s.rows} rows, ${s.requests} requests, ${s.rejects} rejects, ${(s.durationMs / 1000).toFixed(1)} s`);
    lines.push(`  ${'stream'.padEnd(32)} ${'rows'.padStart(9)} ${'requests'.padStart(9)} ${'rejects'.padStart(8)} ${'deleted'.padStart(8)}  outcome`);
    for (const o of s.streams) {
      lines.push(
        `  ${o.stream.padEnd(32)} ${String(o.rows).padStart(9)} ${String(o.requests).padStart(9)} ${String(o.rejects).padStart(8)} ${String(o.deleted).padStart(8)}  ${o.outcome}${o.error ? `: ${o.error}` : ''}`,
      );
    }
  }
  return `${lines.join('\n')}\n`;
}
