import { ConfigError, loadDotEnv } from './config.ts';

/** Each command lives with the code it runs; the CLI only dispatches. */
const commands: Record<string, { summary: string; run: () => Promise<(args: string[]) => Promise<number | void>> }> = {
  start: {
    summary: 'scheduler + workers + status server (jobs in-process without REDIS_URL)',
    run: async () => (await import('./queue/command.ts')).runStartCommand,
  },
  worker: {
    summary: 'take sync jobs from the queue (needs REDIS_URL)',
    run: async () => (await import('./queue/command.ts')).runWorkerCommand,
  },
  scheduler: {
    summary: 'enqueue each job on its cron (needs REDIS_URL)',
    run: async () => (await import('./queue/command.ts')).runSchedulerCommand,
  },
  sync: {
    summary: 'run the stream catalog once, in this process',
    run: async () => (await import('./sync/command.ts')).runSyncCommand,
  },
  migrate: {
    summary: 'apply the warehouse migrations',
    run: async () => (await import('./ops/command.ts')).runMigrateCommand,
  },
  status: {
    summary: "each stream's last run and last success",
    run: async () => (await import('./ops/command.ts')).runStatusCommand,
  },
  serve: {
    summary: 'the status server alone',
    run: async () => (await import('./ops/command.ts')).runServeCommand,
  },
  push: {
    summary: 'queue changes for the service and see what became of them',
    run: async () => (await import('./push/command.ts')).runPushCommand,
  },
  sandbox: {
    summary: 'serve the simulated workforce service',
    run: async () => (await import('./sandbox/command.ts')).runSandboxCommand,
  },
};

function usage(): string {
  const rows = Object.entries(commands).map(([name, c]) => `  ${name.padEnd(10)} ${c.summary}`);
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
  // After .env: the logger reads LOG_LEVEL when it is made.
  const { guardDriverSocketBug } = await import('./warehouse/guard.ts');
  guardDriverSocketBug((await import('./log.ts')).log);
  const run = await command.run();
  return (await run(args)) ?? 0;
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code !== 0) process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`wfsync: ${describeFailure(err)}\n`);
    process.exitCode = 1;
  },
);

/**
 * What went wrong, in one line, for what a user can fix (a setting, an argument, a server that does not answer);
 * the stack only for what is a bug, or when LOG_LEVEL=debug asks for it.
 */
function describeFailure(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const code = (err as { code?: unknown }).code;
  const expected =
    err instanceof ConfigError ||
    err.name === 'UnknownStreamError' ||
    (typeof code === 'string' && (code.startsWith('ERR_PARSE_ARGS') || /^E[A-Z]+$/.test(code)));
  const debug = process.env.LOG_LEVEL === 'debug' || process.env.LOG_LEVEL === 'trace';
  return expected && !debug ? err.message : (err.stack ?? err.message);
}
