import { ConfigError, loadDotEnv } from './config.ts';
import { SourceError, type SourceErrorKind } from './source/errors.ts';
import { causesOf, describeRefusal, isPostgresRefusal } from './warehouse/postgres-error.ts';

/** The commands live in commands/, over the App that wires them; the CLI only dispatches. */
const commands: Record<
  string,
  { summary: string; run: () => Promise<(args: string[]) => Promise<number | undefined>> }
> = {
  start: {
    summary: 'scheduler + workers + status server (jobs in-process without REDIS_URL)',
    run: async () => (await import('./commands/start.ts')).runStartCommand,
  },
  worker: {
    summary: 'take sync jobs from the queue (needs REDIS_URL)',
    run: async () => (await import('./commands/start.ts')).runWorkerCommand,
  },
  scheduler: {
    summary: 'enqueue each job on its cron (needs REDIS_URL)',
    run: async () => (await import('./commands/start.ts')).runSchedulerCommand,
  },
  sync: {
    summary: 'run the stream catalog once, in this process',
    run: async () => (await import('./commands/sync.ts')).runSyncCommand,
  },
  migrate: {
    summary: 'apply the warehouse migrations',
    run: async () => (await import('./commands/status.ts')).runMigrateCommand,
  },
  status: {
    summary: "each stream's last run and last success",
    run: async () => (await import('./commands/status.ts')).runStatusCommand,
  },
  serve: {
    summary: 'the status server alone',
    run: async () => (await import('./commands/status.ts')).runServeCommand,
  },
  schema: {
    summary: 'fields the service added that no column maps, and those gone',
    run: async () => (await import('./commands/schema.ts')).runSchemaCommand,
  },
  dbt: {
    summary: 'write a dbt source package for the warehouse (--out DIR)',
    run: async () => (await import('./commands/dbt.ts')).runDbtCommand,
  },
  push: {
    summary: 'queue changes for the service and see what became of them',
    run: async () => (await import('./commands/push.ts')).runPushCommand,
  },
  companies: {
    summary: 'add, list, pause, resume, rotate the key of, or remove a company',
    run: async () => (await import('./commands/companies-command.ts')).runCompaniesCommand,
  },
  access: {
    summary: "grant or revoke a Postgres role's read access to companies' rows",
    run: async () => (await import('./commands/access.ts')).runAccessCommand,
  },
  'personal-data': {
    summary: 'set or list what is stored of each personal field (keep, hash, block), per company or by default',
    run: async () => (await import('./commands/personal-data.ts')).runPersonalDataCommand,
  },
  erase: {
    summary: 'block every personal field of one person everywhere, and keep it blocked',
    run: async () => (await import('./commands/personal-data.ts')).runEraseCommand,
  },
  resync: {
    summary: 'read one stream of one company again from the start, through the queue or the running start',
    run: async () => (await import('./commands/resync.ts')).runResyncCommand,
  },
  usage: {
    summary: 'requests sent to the service per day, company and stream',
    run: async () => (await import('./commands/usage.ts')).runUsageCommand,
  },
  timeline: {
    summary: 'what happened to a company: changes, failing and recovered streams, re-syncs, upgrades',
    run: async () => (await import('./commands/timeline.ts')).runTimelineCommand,
  },
  tokens: {
    summary: 'make, list or revoke a named API token (scopes push, read, admin; optionally some companies)',
    run: async () => (await import('./commands/tokens.ts')).runTokensCommand,
  },
  audit: {
    summary: 'every change made from the CLI, the dashboard or the API: who, what, when, and its outcome',
    run: async () => (await import('./commands/audit.ts')).runAuditCommand,
  },
  sandbox: {
    summary: 'serve the simulated workforce service',
    run: async () => (await import('./commands/sandbox.ts')).runSandboxCommand,
  },
};

function usage(): string {
  const rows = Object.entries(commands).map(([name, c]) => `  ${name.padEnd(13)} ${c.summary}`);
  return `usage: wfsync <command> [options]\n\ncommands:\n${rows.join('\n')}\n`;
}

async function main(argv: string[]): Promise<number> {
  const [name, ...args] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(usage());
    return name ? 0 : 2;
  }
  const command = commands[name];
  if (!command) {
    process.stderr.write(`wfsync: unknown command "${name}"\n${usage()}`);
    return 2;
  }
  loadDotEnv();
  // Stacks name source lines (through the bundle's source maps) only when asked for: maps cost memory in every process.
  if (process.env.LOG_LEVEL === 'debug') process.setSourceMapsEnabled(true);
  // After .env: the logger reads LOG_LEVEL when it is made.
  const { guardDriverSocketBug } = await import('./warehouse/guard.ts');
  guardDriverSocketBug((await import('./log.ts')).log);
  const run = await command.run();
  return (await run(args)) ?? 0;
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code !== 0) process.exitCode = code;
    exitOnceIdle();
  },
  (err: unknown) => {
    process.stderr.write(`wfsync: ${describeFailure(err)}\n`);
    process.exitCode = 1;
    exitOnceIdle();
  },
);

/** How long a command that has returned may take for its last callbacks (ioredis gives a closing socket 2 s) before the process ends anyway. */
const LINGER_MS = 2_500;

/**
 * A command that returned has closed what it opened; whatever still holds the event loop then (a library's
 * reconnection timer, a socket it did not end) must not keep the process, which would never exit.
 */
function exitOnceIdle(): void {
  setTimeout(() => {
    const held = new Map<string, number>();
    for (const r of process.getActiveResourcesInfo()) held.set(r, (held.get(r) ?? 0) + 1);
    const named = [...held].map(([r, n]) => (n > 1 ? `${n} ${r}` : r)).join(', ');
    process.stderr.write(`wfsync: exiting; still open after the command ended: ${named || 'nothing named'}\n`);
    process.exit();
  }, LINGER_MS).unref();
}

/** What a SourceError of each kind means for the person running the command. */
const SOURCE_FAILURES: Partial<Record<SourceErrorKind, string>> = {
  auth: 'the service refused the API key (WFS_API_KEY)',
  scope: 'the API key lacks a scope this sync needs',
  network: 'no complete answer from the service (WFS_BASE_URL)',
  timeout: 'no answer in time from the service (WFS_BASE_URL)',
  server: 'the service failed',
  schema: 'the service answered something that cannot be read',
  not_found: 'the service does not know this address (WFS_BASE_URL)',
  rate_limit: 'the service kept refusing for its rate limit',
};

/** Errors whose message is written for the person running the command: a setting, an argument, a refusal. */
const WORDED = new Set([
  'UnknownStreamError',
  'CompanyError',
  'AccessError',
  'PersonalDataError',
  'WarehouseError',
  'RedisUnreachableError',
  'TokenError',
]);

/**
 * What went wrong, in one line naming the cause: what the user can fix (a setting, an argument, a key, a server that
 * does not answer or refuses) as its error says it, what Postgres, Redis or the service answered, and anything else
 * by its messages. The stack only when LOG_LEVEL=debug asks for it.
 */
function describeFailure(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const debug = process.env.LOG_LEVEL === 'debug' || process.env.LOG_LEVEL === 'trace';
  if (debug) return err.stack ?? err.message;
  const chain = causesOf(err);
  const line =
    chain.map(userFacing).find((l) => l !== undefined) ?? `${unforeseen(chain)} (LOG_LEVEL=debug shows where)`;
  return line.replace(/\s*\n\s*/g, ' ');
}

/** The line of an error of a kind the user can act on, wrapped or not (drizzle wraps what Postgres said). */
function userFacing(err: Error): string | undefined {
  if (err instanceof ConfigError || WORDED.has(err.name)) return err.message;
  if (err instanceof SourceError)
    return `${SOURCE_FAILURES[err.kind] ?? 'the service refused the request'}: ${err.message}`;
  if (isPostgresRefusal(err)) return `the warehouse refused: ${describeRefusal(err)}`;
  // ioredis's error for a command Redis answered with an error (NOAUTH, READONLY, OOM, …).
  if (err.name === 'ReplyError') return `Redis (REDIS_URL) refused: ${err.message}`;
  const code = (err as { code?: unknown }).code;
  if (typeof code !== 'string') return undefined;
  return code.startsWith('ERR_PARSE_ARGS') || /^E[A-Z]+$/.test(code) ? err.message : undefined;
}

/** An error no kind covers: its messages and its causes', each once, without drizzle's "Failed query" wrapper. */
function unforeseen(chain: Error[]): string {
  const said: string[] = [];
  for (const e of chain) {
    const message = e.message || e.name;
    if (message.startsWith('Failed query:') || said.some((s) => s.includes(message))) continue;
    said.push(message);
  }
  return said.join(': ') || chain[0]!.name;
}
