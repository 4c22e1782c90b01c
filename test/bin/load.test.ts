import { execFile } from 'node:child_process';
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const run = promisify(execFile);

/** A project of its own with this repository's `bin/` and dependencies, and a two-file CLI that prints a word. */
function project(): string {
  const dir = mkdtempSync(join(tmpdir(), 'wfsync-load-'));
  mkdirSync(join(dir, 'bin'));
  mkdirSync(join(dir, 'src'));
  for (const file of ['wfsync.js', 'load.js']) copyFileSync(join(REPO, 'bin', file), join(dir, 'bin', file));
  symlinkSync(join(REPO, 'node_modules'), join(dir, 'node_modules'));
  writeFileSync(join(dir, 'package.json'), '{"type":"module"}\n');
  writeFileSync(
    join(dir, 'src/cli.ts'),
    "import { word } from './word.ts';\nconst say: (w: string) => void = console.log;\nsay(word);\n",
  );
  say(dir, 'one');
  return dir;
}

/** Rewrites the word the CLI prints, with a modification time that moves even within the clock's resolution. */
function say(dir: string, word: string, source = `export const word: string = '${word}';\n`): void {
  const file = join(dir, 'src/word.ts');
  const before = (() => {
    try {
      return statSync(file).mtimeMs;
    } catch {
      return 0;
    }
  })();
  writeFileSync(file, source);
  const at = new Date(Math.max(Date.now(), before + 1000));
  utimesSync(file, at, at);
}

async function wfsync(dir: string): Promise<{ code: number; out: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [join(dir, 'bin/wfsync.js')], { cwd: dir });
    return { code: 0, out: stdout + stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, out: e.stdout + e.stderr };
  }
}

const bundles = (dir: string) => readdirSync(join(dir, '.build')).filter((n) => n !== 'manifest.json');

describe('bin/wfsync.js', () => {
  const dirs: string[] = [];
  const fresh = () => {
    const dir = project();
    dirs.push(dir);
    return dir;
  };
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('runs the sources as they are now: bundled once, and again after a change', async () => {
    const dir = fresh();
    expect(await wfsync(dir)).toEqual({ code: 0, out: 'one\n' });
    const made = bundles(dir);
    expect(made).toHaveLength(1);
    const manifest = statSync(join(dir, '.build/manifest.json')).mtimeMs;

    expect(await wfsync(dir)).toEqual({ code: 0, out: 'one\n' });
    expect(statSync(join(dir, '.build/manifest.json')).mtimeMs).toBe(manifest);

    say(dir, 'two');
    expect(await wfsync(dir)).toEqual({ code: 0, out: 'two\n' });
    expect(bundles(dir)).toHaveLength(2);
    expect(bundles(dir)).toEqual(expect.arrayContaining(made));
  });

  it('names the source file when a change does not compile', async () => {
    const dir = fresh();
    say(dir, '', "export const word: string = 'unclosed;\n");
    const { code, out } = await wfsync(dir);
    expect(code).not.toBe(0);
    expect(out).toMatch(/word\.ts/);
  });

  it('runs the sources through tsx where the bundle cannot be written', async () => {
    const dir = fresh();
    writeFileSync(join(dir, '.build'), 'not a directory\n');
    expect(await wfsync(dir)).toEqual({ code: 0, out: 'one\n' });
  });

  it('lets processes that start side by side all run', async () => {
    const dir = fresh();
    const runs = await Promise.all(Array.from({ length: 4 }, () => wfsync(dir)));
    expect(runs).toEqual(Array.from({ length: 4 }, () => ({ code: 0, out: 'one\n' })));
    expect(bundles(dir)).toHaveLength(1);
  });
});
