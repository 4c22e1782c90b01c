// Runs the TypeScript CLI from a clone without a build step.
//
// The CLI is bundled with esbuild (the version tsx uses) into `.build/<stamp>/`, and bundled again only when
// a source file it was made from has changed. Running the bundle leaves out tsx's loader, which works on a thread
// of its own and its memory in every process. Where the bundle cannot be made (a read-only
// install, a source file that does not compile) the CLI runs through tsx's loader instead, which reports such an
// error against the source.
//
// The bundle sits two directories below the project root, as the source files do, because some modules find the
// project's files (migrations, README) relative to themselves.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = dirname(dirname(fileURLToPath(import.meta.url)));
const BUILD = join(ROOT, '.build');
const MANIFEST = join(BUILD, 'manifest.json');
const ENTRY = 'src/cli.ts';
/** Bundles of earlier sources are removed once older than this: a process started from one has long loaded it. */
const KEEP_OLD_MS = 60 * 60 * 1000;

/** `size:mtime` of a source file, or undefined when it is gone. */
function stampOf(path) {
  try {
    const s = statSync(join(ROOT, path));
    return `${s.size}:${s.mtimeMs}`;
  } catch {
    return undefined;
  }
}

/** The entry of the bundle made from the sources as they are now, if there is one. */
function currentBundle() {
  try {
    const manifest = JSON.parse(readFileSync(MANIFEST, 'utf8'));
    const entry = join(BUILD, manifest.dir, 'cli.js');
    const fresh = Object.entries(manifest.inputs).every(([path, stamp]) => stampOf(path) === stamp);
    return fresh && existsSync(entry) ? entry : undefined;
  } catch {
    return undefined;
  }
}

/** Writes `data` to `path` whole or not at all: processes starting side by side may build at once. */
function writeWhole(path, data) {
  const tmp = `${path}.${process.pid}`;
  writeFileSync(tmp, data);
  renameSync(tmp, path);
}

async function bundle() {
  const esbuild = await import('esbuild');
  mkdirSync(BUILD, { recursive: true });
  const started = Date.now();
  const tmp = join(BUILD, `tmp-${process.pid}-${started}`);
  try {
    const result = await esbuild.build({
      absWorkingDir: ROOT,
      entryPoints: { cli: ENTRY },
      outdir: tmp,
      bundle: true,
      splitting: true,
      format: 'esm',
      platform: 'node',
      target: 'node20',
      packages: 'external',
      sourcemap: 'linked',
      metafile: true,
      logLevel: 'silent',
    });
    // Which sources each output file holds, so a test can tell which sources a process loaded.
    const chunks = {};
    for (const [path, out] of Object.entries(result.metafile.outputs)) {
      if (path.endsWith('.js')) chunks[path.slice(path.lastIndexOf('/') + 1)] = Object.keys(out.inputs).sort();
    }
    writeFileSync(join(tmp, 'chunks.json'), JSON.stringify(chunks));
    const inputs = {};
    for (const path of Object.keys(result.metafile.inputs).sort()) inputs[path] = stampOf(path);
    const dir = createHash('sha256').update(JSON.stringify(inputs)).digest('hex').slice(0, 16);
    const target = join(BUILD, dir);
    try {
      renameSync(tmp, target);
    } catch (err) {
      // Another process made the same bundle first.
      if (!existsSync(join(target, 'cli.js'))) throw err;
    }
    // A source saved while it was bundled may differ from what was bundled: this process runs the bundle, and the
    // next one bundles again.
    const settled = Object.values(inputs).every(
      (stamp) => stamp !== undefined && Number(stamp.split(':')[1]) < started,
    );
    if (settled) writeWhole(MANIFEST, JSON.stringify({ dir, inputs }));
    removeOldBundles(dir);
    return join(target, 'cli.js');
  } finally {
    rmSync(tmp, { recursive: true, force: true });
    await esbuild.stop();
  }
}

function removeOldBundles(keep) {
  for (const name of readdirSync(BUILD)) {
    const path = join(BUILD, name);
    if (name === keep || name === 'manifest.json') continue;
    try {
      if (Date.now() - statSync(path).mtimeMs > KEEP_OLD_MS) rmSync(path, { recursive: true, force: true });
    } catch {
      // Removed by another process meanwhile.
    }
  }
}

export async function loadCli() {
  let entry = currentBundle();
  if (!entry) entry = await bundle().catch(() => undefined);
  if (entry) {
    await import(pathToFileURL(entry).href);
    return;
  }
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/cli.ts');
}
