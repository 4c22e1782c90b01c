import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export const WFSYNC = fileURLToPath(new URL('../../bin/wfsync.js', import.meta.url));

/** The node flags of an executable script's first line (`#!/usr/bin/env -S node --flag ...`). */
export function nodeFlagsOf(script: string): string[] {
  return readFileSync(script, 'utf8')
    .split('\n', 1)[0]!
    .split(/\s+/)
    .filter((word) => word.startsWith('--'));
}

/** The node flags of bin/wfsync.js's first line, which every wfsync process runs with. */
export const WFSYNC_NODE_FLAGS: readonly string[] = nodeFlagsOf(WFSYNC);

export interface Spawned {
  proc: ChildProcess;
  output(): string;
  /** Resolves with the exit code (or the signal's name) and how long it took from now. */
  exited(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Runs `wfsync <args>` as a child process with the given settings; its output is kept for assertions. Started as an
 * operator starts it, as its own executable, so that node gets the flags of its first line.
 */
export function spawnWfsync(args: string[], env: Record<string, string>, cwd?: string): Spawned {
  const proc = spawn(WFSYNC, args, {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/root', ...env },
    cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  proc.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    proc.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return { proc, output: () => out, exited: () => exit };
}

/** What a finished `wfsync` said: its exit code, and stdout and stderr apart (a command's result is on stdout alone). */
export interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `wfsync <args>` to its end (spawnWfsync), keeping stdout and stderr apart. */
export async function runWfsync(args: string[], env: Record<string, string>, cwd?: string): Promise<Ran> {
  const run = spawnWfsync(args, env, cwd);
  let stdout = '';
  let stderr = '';
  run.proc.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
  run.proc.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const { code } = await run.exited();
  return { code, stdout, stderr };
}

export async function waitFor<T>(
  what: string | (() => string),
  probe: () => Promise<T | undefined | false>,
  timeoutMs: number,
  everyMs = 200,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${typeof what === 'string' ? what : what()}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** Runs `wfsync <args>` to its end with `stdin` on its standard input (an API key, a password). */
export function runWfsyncWithInput(args: string[], env: Record<string, string>, stdin: string): Promise<Ran> {
  return new Promise((resolve) => {
    const proc = spawn(process.execPath, [...WFSYNC_NODE_FLAGS, WFSYNC, ...args], {
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/root', ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    proc.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    proc.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    proc.once('exit', (code) => resolve({ code, stdout, stderr }));
    proc.stdin.end(stdin);
  });
}
