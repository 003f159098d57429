/**
 * The gpu-signal backend in WGSL. Per chunk c:
 *  - `notify_c` counts one requirement of c (an arriving tile, or a chunk it forwards being published);
 *    the workgroup that counts the last one calls `publish_c`;
 *  - `publish_c` copies (or, holding c's lock, adds) c's region from the source rank's copy of the
 *    tensor into the destination rank's, sets c's flag, and notifies the chunks that forward c's data;
 *  - a `wait` spins (bounded) on c's flag on c's destination rank.
 * A spin that runs out records the error code, chunk and rank in the control buffer and the
 * workgroup returns; the runtime turns that into a typed error.
 */
import { type AffineRange, type Module } from '@syncopate/ir';
import { CONTROL, controlLayout } from '../control.js';
import type { TensorBinding } from '../fused-kernel.js';
import { guardToWgsl } from '../wgsl/affine.js';
import { identifier, type WgslWriter } from '../wgsl/writer.js';
import type { ChunkTable } from './chunk-table.js';

export interface SignalContext {
  readonly module: Module;
  readonly table: ChunkTable;
  readonly tensors: ReadonlyMap<string, TensorBinding>;
  readonly name: (valueId: number) => string;
  /** Chunk names never published (fault injection). */
  readonly unpublished: ReadonlySet<string>;
}

function describe(ctx: SignalContext, c: number): string {
  const { chunk } = ctx.table.entries[c]!;
  const region = chunk.region.lo.map((lo, i) => `${lo}:${chunk.region.hi[i]}`).join(', ');
  return `%${chunk.value.name}: @${chunk.tensor}[${region}] rank ${chunk.src} -> rank ${chunk.dst}, step ${chunk.step} (${chunk.kind})`;
}

export function emitSignalFunctions(w: WgslWriter, ctx: SignalContext, spinLimit: number): void {
  const layout = controlLayout(ctx.table.entries.length, ctx.table.locks);
  w.line(`const SPIN_LIMIT: u32 = ${spinLimit}u;`);
  w.line(`const FLAGS: u32 = ${layout.flags}u;`);
  w.line(`const COUNTERS: u32 = ${layout.counters}u;`);
  w.line(`const LOCKS: u32 = ${layout.locks}u;`);
  w.line();
  w.line('// Keeps the first error: its code, chunk and rank.');
  w.block('fn record_error(code: u32, chunk: u32, rank: u32)', () => {
    w.block('for (var attempt = 0u; attempt < 64u; attempt++)', () => {
      w.line(`let r = atomicCompareExchangeWeak(&ctl[${CONTROL.errorCode}], 0u, code);`);
      w.line(`if (r.exchanged) { atomicStore(&ctl[${CONTROL.errorChunk}], chunk); atomicStore(&ctl[${CONTROL.errorRank}], rank); return; }`);
      w.line('if (r.old_value != 0u) { return; }');
    });
  });
  w.line();
  w.line("// 1 once the chunk's flag is set; 0 after SPIN_LIMIT tries, or as soon as another workgroup failed.");
  w.block('fn spin_flag(chunk: u32, rank: u32) -> u32', () => {
    w.block('for (var i = 0u; i < SPIN_LIMIT; i++)', () => {
      w.line('if (atomicLoad(&ctl[FLAGS + chunk]) != 0u) { return 1u; }');
      w.line(`if (atomicLoad(&ctl[${CONTROL.errorCode}]) != 0u) { return 0u; }`);
    });
    w.line('record_error(1u, chunk, rank);');
    w.line('return 0u;');
  });
  w.line();
  w.block('fn acquire_lock(lock: u32, chunk: u32, rank: u32) -> u32', () => {
    w.block('for (var i = 0u; i < SPIN_LIMIT; i++)', () => {
      w.line('if (atomicCompareExchangeWeak(&ctl[LOCKS + lock], 0u, 1u).exchanged) { return 1u; }');
      w.line(`if (atomicLoad(&ctl[${CONTROL.errorCode}]) != 0u) { return 0u; }`);
    });
    w.line('record_error(2u, chunk, rank);');
    w.line('return 0u;');
  });
  w.line();
  // Publish functions call the notify functions of later chunks only (steps increase): no recursion.
  for (const e of ctx.table.entries) emitNotify(w, e.index, e.need);
  for (const e of ctx.table.entries) emitPublish(w, ctx, e.index);
}

function emitNotify(w: WgslWriter, c: number, need: number): void {
  w.line(`// Counts one requirement of chunk ${c} (${need} in all); the last one publishes it.`);
  w.block(`fn notify_${c}(lid: u32)`, () => {
    w.line('workgroupBarrier();');
    w.line(`if (lid == 0u) { wg_u = atomicAdd(&ctl[COUNTERS + ${c}u], 1u) + 1u; }`);
    w.line(`if (workgroupUniformLoad(&wg_u) == ${need}u) { publish_${c}(lid); }`);
  });
  w.line();
}

function emitPublish(w: WgslWriter, ctx: SignalContext, c: number): void {
  const { chunk, lock, dependents } = ctx.table.entries[c]!;
  const t = ctx.tensors.get(chunk.tensor)!;
  const ref = identifier('t_', t.name);
  const extents = chunk.region.hi.map((h, i) => h - chunk.region.lo[i]!);
  const count = extents.reduce((a, b) => a * b, 1);
  const strides = t.shape.map((_, i) => t.shape.slice(i + 1).reduce((a, b) => a * b, 1));
  w.line(`// publish ${describe(ctx, c)}`);
  w.block(`fn publish_${c}(lid: u32)`, () => {
    if (ctx.unpublished.has(chunk.value.name)) {
      w.line('// never published: fault injected by CodegenOptions.unpublished');
      return;
    }
    if (lock >= 0) {
      w.line('workgroupBarrier();');
      w.line(`if (lid == 0u) { wg_u = acquire_lock(${lock}u, ${c}u, ${chunk.src}u); }`);
      w.line('if (workgroupUniformLoad(&wg_u) == 0u) { return; }');
    }
    w.block(`for (var e = lid; e < ${count}u; e += WORKGROUP_SIZE)`, () => {
      // Element e of the region, row-major, as an offset into one rank's copy of the tensor.
      const terms = extents.map((_, i) => {
        const inner = extents.slice(i + 1).reduce((a, b) => a * b, 1);
        const coord = `(${chunk.region.lo[i]}u + (e / ${inner}u) % ${extents[i]}u)`;
        return `${coord} * ${strides[i]}u`;
      });
      w.line(`let at = ${terms.join(' + ')};`);
      const dst = `${ref}[${chunk.dst}u * ${t.elementsPerRank}u + at]`;
      const src = `${ref}[${chunk.src}u * ${t.elementsPerRank}u + at]`;
      w.line(chunk.kind === 'copy' ? `${dst} = ${src};` : `${dst} = ${dst} + ${src};`);
    });
    w.line('storageBarrier();');
    w.line('workgroupBarrier();');
    w.block('if (lid == 0u)', () => {
      if (lock >= 0) w.line(`atomicStore(&ctl[LOCKS + ${lock}u], 0u);`);
      w.line(`atomicStore(&ctl[FLAGS + ${c}u], 1u);`);
    });
    for (const d of dependents) w.line(`notify_${d}(lid);`);
  });
  w.line();
}

/** On the chunk's destination rank, where the guard holds: spin until its flag is set. */
export function emitWait(w: WgslWriter, ctx: SignalContext, c: number, guard: readonly AffineRange[] | undefined): void {
  const { chunk } = ctx.table.entries[c]!;
  w.line(`// wait ${describe(ctx, c)}`);
  w.block(`if (rank == ${chunk.dst}u && ${guardToWgsl(guard, ctx.name)})`, () => {
    w.line('workgroupBarrier();');
    w.line(`if (lid == 0u) { wg_u = spin_flag(${c}u, rank); }`);
    w.line('if (workgroupUniformLoad(&wg_u) == 0u) { return; }');
    w.line('storageBarrier();');
  });
}

/**
 * On the chunk's source rank (and for a reduce-add its destination rank, whose stores it adds onto),
 * where the guard holds: this tile's stores are done; count it.
 */
export function emitArrive(w: WgslWriter, ctx: SignalContext, c: number, guard: readonly AffineRange[] | undefined): void {
  const { chunk } = ctx.table.entries[c]!;
  const ranks = chunk.kind === 'reduce-add' ? `(rank == ${chunk.src}u || rank == ${chunk.dst}u)` : `rank == ${chunk.src}u`;
  w.line(`// arrive ${describe(ctx, c)}`);
  w.block(`if (${ranks} && ${guardToWgsl(guard, ctx.name)})`, () => {
    w.line('storageBarrier();');
    w.line(`notify_${c}(lid);`);
  });
}
