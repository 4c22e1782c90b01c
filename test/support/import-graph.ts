import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * The floors of the house, lowest first. A module imports only from its own folder or from a folder on a lower
 * floor; two folders on one floor do not import each other. Files at the top of `src/` count as folders of
 * their own name.
 */
export const LAYERS: readonly (readonly string[])[] = [
  ['config', 'shutdown', 'console'],
  ['log', 'settings-docs'],
  ['redis-health', 'locks'],
  ['ratelimit'],
  ['observers'],
  ['source', 'warehouse'],
  ['resources'],
  ['sync', 'push', 'sandbox'],
  ['queue'],
  ['ops'],
  ['jobs'],
  ['app'],
  ['commands'],
  ['cli'],
];

export interface ImportGraph {
  /** Paths relative to the project, `src/…` and `jobs/…`. */
  files: string[];
  /** Importer → imported, both relative to the project; type-only imports count. */
  edges: [string, string][];
}

function modulesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return modulesUnder(path);
    return name.endsWith('.ts') ? [path] : [];
  });
}

const IMPORT = /(?:\bfrom\s+|\bimport\s*\(\s*|^import\s+)'(\.{1,2}\/[^']+)'/gm;

export function importGraph(): ImportGraph {
  const paths = [...modulesUnder(join(ROOT, 'src')), ...modulesUnder(join(ROOT, 'jobs'))];
  const edges: [string, string][] = [];
  for (const path of paths) {
    const from = relative(ROOT, path);
    for (const m of readFileSync(path, 'utf8').matchAll(IMPORT)) {
      edges.push([from, relative(ROOT, resolve(dirname(path), m[1]!))]);
    }
  }
  return { files: paths.map((p) => relative(ROOT, p)), edges };
}

/** `src/sync/engine.ts` → `sync`; `src/cli.ts` → `cli`; `jobs/x.ts` → `jobs`. */
export function folderOf(file: string): string {
  const parts = file.split('/');
  if (parts[0] !== 'src') return parts[0]!;
  return parts.length > 2 ? parts[1]! : parts[1]!.replace(/\.ts$/, '');
}

function floorOf(folder: string): number {
  return LAYERS.findIndex((floor) => floor.includes(folder));
}

/** Each import that reaches a folder on the importer's floor or above: `from -> to`. */
export function layerViolations(graph: ImportGraph): string[] {
  return graph.edges
    .filter(([from, to]) => {
      const a = folderOf(from);
      const b = folderOf(to);
      return a !== b && floorOf(b) >= floorOf(a);
    })
    .map(([from, to]) => `${from} -> ${to}`);
}

/**
 * Folders without a barrel: every module outside them imports the module that holds what it needs, by its own
 * path, so the graph shows which of the folder's jobs a module uses.
 */
export const NO_BARREL: readonly string[] = ['warehouse'];

/** Each module re-exporting from another module of its folder (`export … from './x.ts'`) in a NO_BARREL folder. */
export function barrels(graph: ImportGraph): string[] {
  return graph.files.filter(
    (file) =>
      NO_BARREL.includes(folderOf(file)) &&
      /^export\s+(?:type\s+)?(?:\*|\{[^}]*\})\s+from\s+'\.\//m.test(readFileSync(join(ROOT, file), 'utf8')),
  );
}

/** Each cycle of file imports, as the files along it. */
export function importCycles(graph: ImportGraph): string[][] {
  const next = new Map<string, string[]>();
  for (const [from, to] of graph.edges) next.set(from, [...(next.get(from) ?? []), to]);
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const cycles: string[][] = [];
  const visit = (file: string): void => {
    state.set(file, 'open');
    stack.push(file);
    for (const to of next.get(file) ?? []) {
      if (state.get(to) === 'open') cycles.push([...stack.slice(stack.indexOf(to)), to]);
      else if (!state.has(to)) visit(to);
    }
    stack.pop();
    state.set(file, 'done');
  };
  for (const file of graph.files) if (!state.has(file)) visit(file);
  return cycles;
}
