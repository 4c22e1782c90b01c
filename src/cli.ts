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
  const run = await command.run();
  return (await run(args)) ?? 0;
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code !== 0) process.exitCode = code;
  },
  (err: unknown) => {
    // A bad setting or argument is one clear line, not a stack.
    const message = err instanceof ConfigError || (err as { code?: string })?.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION'
      ? (err as Error).message
      : (err as Error)?.stack ?? String(err);
    process.stderr.write(`wfsync: ${message}\n`);
    process.exitCode = 1;
  },
);
