/** Reads a fused kernel's wait and arrive tables back (gpu-signal/barrier-table.ts), for tests. */
import type { FusedKernel } from '../src/index.js';

/** Entries of point `name` (`WAITS_0`, `ARRIVES_1`, ...) per rank and tile (`"pm,pn"`), each `words` long. */
export function barrierRows(kernel: FusedKernel, name: string, words: number): Map<number, Map<string, number[][]>> {
  const base = Number(new RegExp(`const ${name}: u32 = (\\d+)u;`).exec(kernel.wgsl)?.[1]);
  if (!Number.isInteger(base)) throw new Error(`no table ${name} in the kernel`);
  const gridRank = Number(/const GRID_RANK: u32 = (\d+)u;/.exec(kernel.wgsl)![1]);
  const data = kernel.tables.data;
  const tiles = kernel.tilesPerRank;
  const out = new Map<number, Map<string, number[][]>>();
  kernel.localRanks.forEach((rank, local) => {
    const rows = new Map<string, number[][]>();
    for (let position = 0; position < tiles; position++) {
      const slot = (rank * tiles + position) * gridRank;
      const tile = Array.from(data.slice(slot, slot + gridRank)).join();
      const at = base + 2 * (local * tiles + position);
      const [first, count] = [data[at]!, data[at + 1]!];
      rows.set(tile, Array.from({ length: count }, (_, i) => Array.from(data.slice(first + i * words, first + (i + 1) * words))));
    }
    out.set(rank, rows);
  });
  return out;
}
