// Hashes what the compiler makes for a broad set of cases: the compiled IR (or its diagnostics), and
// per target and placement the WGSL, tables, views and phases of emitPlacedKernels (or its diagnostics).
// Bundle it against a commit's sources as run.sh bundles the CLI, then: node hash-cases.mjs > hashes.txt
// (one line a case; `diff` two commits' files: no line may differ). Every workload at 2-16 ranks, 1-4
// chunks a rank, f32 and f16, three orders, SIMT and subgroup matrices, one device and two.
import { createHash } from 'node:crypto';
import { compile, getWorkload, print } from '@syncopate/core';
import { emitPlacedKernels } from '@syncopate/backends';
import { placeRanks } from '@syncopate/runtime';

const WORKLOADS = ['ag-gemm', 'gemm-rs', 'gemv-ar', 'a2a-gemm', 'embed-a2a', 'ring-attn'];
const RANKS = (process.env.RANKS ?? '2,3,4,5,6,8,12,16').split(',').map(Number);
const ORDERS = ['row-major', 'grouped', 'chunk-arrival'];
const replacer = (_k, v) => {
  if (ArrayBuffer.isView(v)) return Array.from(v);
  if (v instanceof Map) return { map: [...v] };
  if (v instanceof Set) return { set: [...v] };
  if (typeof v === 'function' || typeof v === 'bigint') return String(v);
  return v;
};
const hash = (x) => createHash('sha256').update(typeof x === 'string' ? x : JSON.stringify(x, replacer)).digest('hex').slice(0, 16);
const errText = (e) => `${e?.constructor?.name}: ${e?.message}`;
let n = 0;
for (const name of WORKLOADS) {
  const w = getWorkload(name);
  for (const ranks of RANKS) for (const cpr of [1, 2, 3, 4]) for (const dtype of ['f32', 'f16']) for (const devices of [1, 2]) for (const target of ['simt', 'subgroup-matrix']) {
    const o = { ranks, shape: w.defaults, dtype, chunksPerRank: cpr, devices };
    const key = `${name} R${ranks} c${cpr} ${dtype} d${devices} ${target}`;
    let built, placement;
    try {
      placement = devices === 1 ? [] : placeRanks(ranks, devices);
      const block = target === 'subgroup-matrix' ? w.tensorCoreBlock?.(o) : undefined;
      built = w.build(block ? { ...o, block } : o);
    } catch (e) { console.log(`${key}: build ${errText(e)}`); n++; continue; }
    for (const order of ORDERS) {
      let line = `${key} ${order}: `;
      try {
        const c = compile(built.kernel, built.plan, { passOptions: { 'reorder-tiles': { order, ...(devices > 1 ? { rankDevice: placement } : {}) } } });
        if (c._tag === 'Left') { line += `diag ${hash(c.left)}`; }
        else {
          line += `ir ${hash(print(c.right.module))}`;
          try {
            const p = emitPlacedKernels(c.right.module, placement, { target });
            line += p._tag === 'Left' ? ` emit-diag ${hash(p.left)}` : ` emit ${hash(p.right)} wgsl ${p.right.devices.map((d) => d.kernel.wgsl.length).join('/')}`;
          } catch (e) { line += ` emit-throw ${hash(errText(e))}`; }
        }
      } catch (e) { line += `throw ${hash(errText(e))}`; }
      console.log(line); n++;
    }
  }
}
console.error(`${n} cases`);
