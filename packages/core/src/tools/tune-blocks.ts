/**
 * The GEMM tiles the autotuner tries. The lists are the tiles measured fastest on the H100
 * (benchmarks/gemm.md): f16 on subgroup matrices 128x128x64, 128x256x16, 128x256x32 (the fastest emitted
 * at 4096³ and 8192³: benchmarks/results/h100-2026-11-25c/call5/tiles/matmul-tiles.json) and 128x128x32, f32 SIMT 128x128x8
 * then 128x128x16, and 64x64x32, the tile each path had before. Other devices may rank them
 * differently, which is why they are timed rather than chosen here.
 */
import { shrinkBlock, type BlockShape, type WorkloadDType, type WorkloadName, type WorkloadShape } from '../workloads/index.js';

const F16_TILES: readonly BlockShape[] = [
  { m: 128, n: 128, k: 64 },
  { m: 128, n: 256, k: 16 },
  { m: 128, n: 256, k: 32 },
  { m: 128, n: 128, k: 32 },
  { m: 64, n: 64, k: 32 },
];

const F32_TILES: readonly BlockShape[] = [
  { m: 128, n: 128, k: 8 },
  { m: 128, n: 128, k: 16 },
  { m: 64, n: 64, k: 32 },
];

/** Only these build their tile from `block` alone; the others keep their own choice. */
const TILED_WORKLOADS: readonly WorkloadName[] = ['ag-gemm', 'gemm-rs'];

export function sameBlock(a: BlockShape | undefined, b: BlockShape | undefined): boolean {
  return a === b || (a !== undefined && b !== undefined && a.m === b.m && a.n === b.n && a.k === b.k);
}

/** `8x8x8`, or `default` for the workload's own choice. */
export function blockLabel(block: BlockShape | undefined): string {
  return block === undefined ? 'default' : `${block.m}x${block.n}x${block.k}`;
}

/**
 * The tiles to try for a workload at a shape: first `undefined` (the workload's own choice), then
 * the measured-fast tiles shrunk to the shape, each once. Workloads whose tile the tuner does not
 * vary get `[undefined]`.
 */
export function tuneBlocks(workload: WorkloadName, shape: WorkloadShape, dtype: WorkloadDType): (BlockShape | undefined)[] {
  if (!TILED_WORKLOADS.includes(workload)) return [undefined];
  const [tiles, minK] = dtype === 'f16' ? [F16_TILES, 16] : [F32_TILES, 8];
  const blocks: (BlockShape | undefined)[] = [undefined];
  for (const tile of tiles) {
    const shrunk = shrinkBlock(tile, shape, minK);
    if (!blocks.some((b) => sameBlock(b, shrunk))) blocks.push(shrunk);
  }
  return blocks;
}
