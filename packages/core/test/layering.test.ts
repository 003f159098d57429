/**
 * The layers of @syncopate/core import one way: api/ knows nothing of workloads or tools; the
 * workload library (workloads/, layers/) builds on api/ only; tools/ may use both. Only index.ts
 * (the package's entry) sees every layer.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const src = resolve(dirname(fileURLToPath(import.meta.url)), '../src');

/** Lower layers first; a file may import its own layer and those before it. */
const LAYERS = ['api', 'library', 'tools'] as const;
type Layer = (typeof LAYERS)[number];

function layerOf(file: string): Layer | 'entry' {
  const top = relative(src, file).split('/')[0]!;
  if (top === 'index.ts') return 'entry';
  if (top === 'api') return 'api';
  if (top === 'workloads' || top === 'layers') return 'library';
  if (top === 'tools') return 'tools';
  throw new Error(`${relative(src, file)} lies in no layer: put it under api/, workloads/, layers/ or tools/`);
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    return e.isDirectory() ? sourceFiles(path) : e.name.endsWith('.ts') ? [path] : [];
  });
}

/** The files a module imports or re-exports by relative path. */
function relativeImports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const specs = [...text.matchAll(/(?:import|export)[^;]*?from\s*'(\.{1,2}\/[^']+)'/g)].map((m) => m[1]!);
  return specs.map((spec) => resolve(dirname(file), spec.replace(/\.js$/, '.ts')));
}

describe('@syncopate/core layering', () => {
  const files = sourceFiles(src);

  it('puts every source file in a layer', () => {
    expect(files.length).toBeGreaterThan(40);
    for (const f of files) expect(() => layerOf(f)).not.toThrow();
  });

  it('imports only from its own layer or a lower one, and never the entry', () => {
    const upward: string[] = [];
    for (const file of files) {
      const from = layerOf(file);
      for (const target of relativeImports(file)) {
        const to = layerOf(target);
        const rel = `${relative(src, file)} -> ${relative(src, target)}`;
        if (to === 'entry') upward.push(`${rel} (the entry)`);
        else if (from !== 'entry' && LAYERS.indexOf(to) > LAYERS.indexOf(from)) upward.push(`${rel} (${from} imports ${to})`);
      }
    }
    expect(upward).toEqual([]);
  });

  it('is drawn in docs/contributing.md as scripts/import-graph.mjs draws it', () => {
    const drawn = execFileSync(process.execPath, [resolve(src, '../../../scripts/import-graph.mjs')], { encoding: 'utf8' }).trimEnd();
    const doc = readFileSync(resolve(src, '../../../docs/contributing.md'), 'utf8');
    const shown = /how many import lines\):\n\n```\n([\s\S]*?)\n```/.exec(doc)?.[1];
    expect(shown).toBe(drawn);
  });
});
