import { describe, expect, it } from 'vitest';
import { importGraph, importCycles, folderOf, LAYERS, layerViolations } from './support/import-graph.ts';

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
});
