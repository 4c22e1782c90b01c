import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  barrels,
  importGraph,
  importCycles,
  folderOf,
  LAYERS,
  layerViolations,
  NO_BARREL,
} from './support/import-graph.ts';

describe('the import graph', () => {
  const graph = importGraph();

  it('reads every module of src/ and jobs/', () => {
    expect(graph.files.length).toBeGreaterThan(100);
    expect(graph.files).toContain('src/cli.ts');
    expect(graph.files).toContain('jobs/index.ts');
  });

  it('places every folder of src/ on a floor', () => {
    const unplaced = [...new Set(graph.files.map(folderOf))].filter((f) => !LAYERS.some((floor) => floor.includes(f)));
    expect(unplaced).toEqual([]);
  });

  it('has no import from a folder to one on its own floor or above', () => {
    expect(layerViolations(graph)).toEqual([]);
  });

  it('has no import cycle between files', () => {
    expect(importCycles(graph)).toEqual([]);
  });

  it(`has no barrel in ${NO_BARREL.join(', ')}: each module is imported by its own path`, () => {
    expect(barrels(graph)).toEqual([]);
    for (const folder of NO_BARREL) expect(graph.files).not.toContain(`src/${folder}/index.ts`);
  });

  it("matches the README's Layout: every folder on the floor the README gives it", () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    const block = /## Layout[\s\S]*?```\n([\s\S]*?)```/.exec(readme)![1]!;
    const documented = new Map<string, number>();
    let floor = -1;
    for (const line of block.split('\n').slice(1)) {
      const number = /^\s*(\d+)\s/.exec(line);
      if (number) floor = Number(number[1]);
      for (const m of line.matchAll(/(?:src\/([a-z-]+)(?:\.ts|\/)|(jobs)\/)/g)) documented.set(m[1] ?? m[2]!, floor);
    }
    const actual = new Map(LAYERS.flatMap((folders, i) => folders.map((f) => [f, i] as const)));
    expect(Object.fromEntries(documented)).toEqual(Object.fromEntries(actual));
  });
});
