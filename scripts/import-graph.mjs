#!/usr/bin/env node
// The layout of @syncopate/core drawn from its imports: for each folder of packages/core/src (api,
// workloads, layers, tools, tools/cli), the folders and packages it imports and how many import lines
// each. docs/contributing.md shows its output; packages/core/test/layering.test.ts checks the direction
// and that the docs show what this prints.
//
//   node scripts/import-graph.mjs
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const src = resolve(dirname(fileURLToPath(import.meta.url)), '../packages/core/src');

function files(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
}

/** `tools/cli` for a file in it, `api` for api/x.ts, `index.ts` for the entry. */
function folderOf(file) {
  const parts = relative(src, file).split('/');
  if (parts.length === 1) return parts[0];
  return parts[0] === 'tools' && parts.length > 2 ? `tools/${parts[1]}` : parts[0];
}

const edges = new Map();
for (const file of files(src)) {
  const from = folderOf(file);
  const text = readFileSync(file, 'utf8');
  for (const [, spec] of text.matchAll(/(?:import|export)[^;]*?from\s*'([^']+)'/g)) {
    let to;
    if (spec.startsWith('.')) to = folderOf(resolve(dirname(file), spec));
    else if (spec.startsWith('@syncopate/')) to = spec;
    else continue;
    if (to === from) continue;
    const key = `${from} -> ${to}`;
    edges.set(key, (edges.get(key) ?? 0) + 1);
  }
}

const order = ['index.ts', 'tools/cli', 'tools', 'layers', 'workloads', 'api'];
const rank = (f) => (order.includes(f) ? order.indexOf(f) : order.length);
const byFolder = new Map();
for (const [key, n] of edges) {
  const [from, to] = key.split(' -> ');
  if (!byFolder.has(from)) byFolder.set(from, []);
  byFolder.get(from).push(`${to} (${n})`);
}
for (const from of [...byFolder.keys()].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b))) {
  const targets = byFolder.get(from).sort((a, b) => rank(a.split(' ')[0]) - rank(b.split(' ')[0]) || a.localeCompare(b));
  console.log(`${from.padEnd(10)} -> ${targets.join(', ')}`);
}
