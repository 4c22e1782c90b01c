import { spawnSync, type SpawnSyncOptions } from 'node:child_process';
import { chmodSync, copyFileSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const SCRIPT = fileURLToPath(new URL('../../bin/test-tools.sh', import.meta.url));
const root = process.getuid?.() === 0;
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A directory for PATH holding only the named commands of this machine: none of the tools the tests need. */
function pathWith(...commands: string[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'wfsync-path-'));
  dirs.push(dir);
  for (const c of commands) symlinkSync(`/usr/bin/${c}`, join(dir, c));
  chmodSync(dir, 0o755);
  return dir;
}

function run(env: Record<string, string>, options: SpawnSyncOptions = {}, argv = ['/bin/sh', SCRIPT]) {
  const [file, ...args] = argv as [string, ...string[]];
  const r = spawnSync(file, args, { env, encoding: 'utf8', ...options });
  return { code: r.status, out: String(r.stdout), err: String(r.stderr) };
}

/**
 * The script as an unprivileged user reads it, when the tests run as root (an unprivileged run is one already): a
 * copy outside the checkout, which may be a private directory that user cannot enter, run from there.
 */
function asUnprivileged(): { options: SpawnSyncOptions; argv: string[] } {
  if (!root) return { options: {}, argv: ['/bin/sh', SCRIPT] };
  const dir = pathWith();
  const copy = join(dir, 'test-tools.sh');
  copyFileSync(SCRIPT, copy);
  chmodSync(copy, 0o644);
  return { options: { uid: 65534, gid: 65534, cwd: dir }, argv: ['/bin/sh', copy] };
}

describe('bin/test-tools.sh (npm pretest)', () => {
  it('does nothing and says nothing where every tool is found', () => {
    expect(run({ PATH: process.env.PATH ?? '' })).toEqual({ code: 0, out: '', err: '' });
  });

  it('stops in one line naming the apt-get command for the missing tools when it is not root', () => {
    const { options, argv } = asUnprivileged();
    const r = run({ PATH: pathWith('id', 'apt-get') }, options, argv);
    expect(r.code).toBe(1);
    expect(r.out).toBe('');
    // chromium is found at /usr/bin/chromium whatever PATH says, as the browser tests launch it there.
    expect(r.err).toBe(
      'npm test needs redis-server promtool amtool docker-compose: ' +
        'run `sudo apt-get install -y redis-server prometheus prometheus-alertmanager docker-compose` ' +
        "(Debian's packages), then npm test again\n",
    );
  });

  it.runIf(root)('stops in one line as root where there is no apt-get', () => {
    const r = run({ PATH: pathWith('id') });
    expect(r.code).toBe(1);
    expect(r.err).toMatch(
      /^npm test needs redis-server promtool amtool docker-compose: run `sudo apt-get install -y redis-server prometheus prometheus-alertmanager docker-compose`[^\n]*\n$/,
    );
  });

  it.runIf(root)('counts chromium missing where /usr/bin/chromium is not there (a private mount hides it)', () => {
    const empty = join(pathWith(), 'not-chromium');
    writeFileSync(empty, '');
    // Root without apt-get on PATH: the script reports rather than installs.
    const hide = `/bin/mount --bind ${empty} /usr/bin/chromium && exec /bin/sh ${SCRIPT}`;
    const r = run({ PATH: pathWith('id') }, {}, [
      '/usr/bin/unshare',
      '--mount',
      '--propagation',
      'private',
      '/bin/sh',
      '-c',
      hide,
    ]);
    expect(r.err).toBe(
      'npm test needs redis-server chromium promtool amtool docker-compose: run `sudo apt-get install -y ' +
        "redis-server chromium prometheus prometheus-alertmanager docker-compose` (Debian's packages), then npm test again\n",
    );
    expect(r.code).toBe(1);
  });

  it('names CHROMIUM_PATH when it points at no executable, rather than installing a chromium it would not use', () => {
    const r = run({ PATH: process.env.PATH ?? '', CHROMIUM_PATH: '/nonexistent/chromium' });
    expect(r.code).toBe(1);
    expect(r.err).toBe(
      'npm test: CHROMIUM_PATH=/nonexistent/chromium is not an executable: point it at chromium, or unset it for /usr/bin/chromium\n',
    );
  });
});
