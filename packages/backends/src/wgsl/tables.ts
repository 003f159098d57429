/**
 * The read-only tables a fused kernel reads, in one u32 buffer:
 *   every rank's tile order ([rank][position][axis]),
 *   the device's ranks,
 *   one row per phase: first ticket, token count, where its tokens are, then per local rank the
 *   start and count of its range of positions,
 *   the token lists,
 *   the chunk part descriptors (gpu-signal/descriptors.ts),
 *   the rows of the waits and arrives (gpu-signal/barrier-table.ts).
 * A workgroup finds its phase from its ticket: tickets run on across phases, and each phase's
 * dispatch is padded to whole rows of workgroups that its row accounts for.
 */
import { scheduleTable, type Module, type TileOrder } from '@syncopate/ir';
import { appendBarrierRows, type BarrierPoint } from '../gpu-signal/barrier-table.js';
import type { ChunkTable } from '../gpu-signal/chunk-table.js';
import { descriptorWords, writeChunkDescriptors } from '../gpu-signal/descriptors.js';
import type { DeviceView } from '../placement/device-view.js';

const MAX_DISPATCH = 65535;

export interface KernelTables {
  readonly data: Uint32Array;
  readonly localRanksAt: number;
  readonly phasesAt: number;
  readonly phaseWords: number;
  readonly chunksAt: number;
  /** Where each barrier point's rows start, and its iteration bits (points indexed by a loop's iterations). */
  readonly pointsAt: readonly number[];
  readonly pointBitsAt: readonly number[];
  /** Per phase: workgroups to dispatch as [x, y]; [0, 0] for a phase with nothing to do. */
  readonly dispatches: readonly (readonly [number, number])[];
}

/** Workgroups as [x, y] within the per-dimension limit; x·y may exceed `total` by less than a row. */
export function dispatchShape(total: number): [number, number] {
  if (total === 0) return [0, 0];
  const x = Math.min(total, MAX_DISPATCH);
  return [x, Math.ceil(total / x)];
}

/**
 * Rank `rank`'s tiles in the order its tickets run them. `scheduleTable` checks the whole order each
 * time, every rank's segments among it: once a rank, that was a pass over all ranks' segments per
 * rank (embed-a2a at 64 ranks: 4 of 5 s of its WGSL). So each rank's own list is looked up alone.
 */
export function rankSchedule(order: TileOrder, grid: readonly number[], rank: number): number[][] {
  if (order.kind === 'segments') return scheduleTable({ ...order, ranks: [order.ranks[rank]!] }, grid, 0);
  if (order.kind === 'rank-table') return scheduleTable({ ...order, tables: [order.tables[rank]!] }, grid, 0);
  return scheduleTable(order, grid, rank);
}

/** `push(...items)` passes every item as an argument, which overflows the stack for large tables. */
function append(words: number[], items: readonly number[]): void {
  for (const x of items) words.push(x);
}

export function kernelTables(module: Module, table: ChunkTable, view: DeviceView, tensorIndex: (name: string) => number, points: readonly BarrierPoint[] = []): KernelTables {
  const grid = module.kernel.grid;
  const tiles = grid.reduce((a, b) => a * b, 1);
  const words: number[] = new Array<number>(module.ranks * tiles * grid.length);
  const orders: number[][][] = [];
  for (let r = 0; r < module.ranks; r++) {
    orders.push(rankSchedule(module.kernel.scheduler.order, grid, r));
    orders[r]!.forEach((tile, position) => tile.forEach((x, axis) => (words[(r * tiles + position) * grid.length + axis] = x)));
  }
  const localRanksAt = words.length;
  append(words, view.ranks);
  const phasesAt = words.length;
  const phaseWords = 3 + 2 * view.ranks.length;
  let tokensAt = phasesAt + phaseWords * view.phases.length;
  let ticket = 0;
  const dispatches: [number, number][] = [];
  for (const phase of view.phases) {
    const widest = Math.max(0, ...phase.tiles.map((t) => t.count));
    const shape = dispatchShape(phase.tokens.length + view.ranks.length * widest);
    dispatches.push(shape);
    words.push(ticket, phase.tokens.length, tokensAt, ...phase.tiles.flatMap((t) => [t.start, t.count]));
    ticket += shape[0] * shape[1];
    tokensAt += phase.tokens.length;
  }
  for (const phase of view.phases) append(words, phase.tokens);
  // The descriptors (a hundred thousand words at 64 ranks) go straight into the typed array; the
  // barrier rows after them are gathered apart, as they are found.
  const chunksAt = words.length;
  const rowsAt = chunksAt + descriptorWords(table);
  const rows: number[] = [];
  const { bases: pointsAt, bits: pointBitsAt } = appendBarrierRows(rows, module, table, points, { ranks: view.ranks, orders }, rowsAt);
  const data = new Uint32Array(rowsAt + rows.length);
  data.set(words);
  writeChunkDescriptors(data, chunksAt, table, view.need, tensorIndex);
  data.set(rows, rowsAt);
  return { data, localRanksAt, phasesAt, phaseWords, chunksAt, pointsAt, pointBitsAt, dispatches };
}
