/**
 * The transfer plan of placed kernels as plain data (what `--dump-wgsl` writes as plan.json): which
 * device runs which ranks; each device's phases (dispatches) with their workgroups, each rank's tiles,
 * the chunks that land before and are sent after them and those that move inside them; and every
 * chunk with its route, the phases it is read, landed and published in, and, for a chunk that crosses
 * devices, the byte runs the host copies.
 */
import { chunkTransfer, type ChunkRoute, type PlacedKernels } from '@syncopate/backends';
import type { Module } from '@syncopate/ir';

export interface TransferPlanPhase {
  readonly phase: number;
  readonly workgroups: readonly [number, number];
  /** Workgroups that count a ready chunk part each, before the tiles. */
  readonly tokenWorkgroups: number;
  /** Per local rank: the range of its tile order this phase runs. */
  readonly tiles: readonly { readonly rank: number; readonly start: number; readonly count: number }[];
  /** Chunks the host puts in place before the phase, and sends once it is done. */
  readonly lands: readonly string[];
  readonly sends: readonly string[];
  /** Chunks published inside the dispatch (they stay on this device). */
  readonly inside: readonly string[];
}

export interface TransferPlanDevice {
  readonly device: number;
  readonly ranks: readonly number[];
  readonly wgsl: string;
  /** Chunks sent before the first phase (their data is an input). */
  readonly sendsAtLaunch: readonly string[];
  readonly phases: readonly TransferPlanPhase[];
}

export interface TransferPlanChunk {
  readonly index: number;
  readonly name: string;
  readonly tensor: string;
  readonly region: { readonly lo: readonly number[]; readonly hi: readonly number[] };
  readonly src: number;
  readonly dst: number;
  readonly step: number;
  readonly kind: string;
  readonly route: ChunkRoute;
  readonly fromDevice: number;
  readonly toDevice: number;
  /** Phase on the destination's device it is published in, at the latest. */
  readonly publishedInPhase: number;
  /** A chunk between devices: the source's phase after which it is read (−1: at launch) and the destination's it lands before. */
  readonly readAfterPhase?: number;
  readonly landsBeforePhase?: number;
  readonly bytes?: number;
  readonly byteRuns?: readonly { readonly offset: number; readonly bytes: number }[];
}

export interface TransferPlan {
  readonly module: string;
  readonly ranks: number;
  readonly rankDevice: readonly number[];
  readonly devices: readonly TransferPlanDevice[];
  readonly chunks: readonly TransferPlanChunk[];
}

/** `wgslFile(d)` names device d's WGSL in the plan (the file `--dump-wgsl` writes beside it). */
export function transferPlan(module: Module, placed: PlacedKernels, wgslFile: (device: number) => string = (d) => `device-${d}.wgsl`): TransferPlan {
  const chunks = module.chunks;
  const device = (rank: number) => placed.rankDevice[rank] ?? 0;
  const crosses = (c: number) => device(chunks[c]!.src) !== device(chunks[c]!.dst);
  const pub = (c: number) => placed.phases?.pub[c] ?? 0;
  const name = (c: number) => chunks[c]!.value.name;
  const tensors = placed.devices[0]!.kernel.tensors;
  return {
    module: module.name,
    ranks: module.ranks,
    rankDevice: placed.rankDevice,
    devices: placed.devices.map(({ view, kernel }, d) => ({
      device: d,
      ranks: view.ranks,
      wgsl: wgslFile(d),
      sendsAtLaunch: view.sendsAtLaunch.map(name),
      phases: view.phases.map((phase, p) => ({
        phase: p,
        workgroups: kernel.phases[p]!,
        tokenWorkgroups: phase.tokens.length,
        tiles: view.ranks.map((rank, i) => ({ rank, ...phase.tiles[i]! })),
        lands: phase.lands.map(name),
        sends: phase.sends.map(name),
        inside: chunks.flatMap((c, i) => (!crosses(i) && device(c.dst) === d && pub(i) === p ? [c.value.name] : [])),
      })),
    })),
    chunks: chunks.map((c, i): TransferPlanChunk => {
      const base = {
        index: i,
        name: c.value.name,
        tensor: c.tensor,
        region: { lo: c.region.lo, hi: c.region.hi },
        src: c.src,
        dst: c.dst,
        step: c.step,
        kind: c.kind,
        route: placed.phases?.route[i] ?? 'gpu-signal',
        fromDevice: device(c.src),
        toDevice: device(c.dst),
        publishedInPhase: pub(i),
      };
      if (!crosses(i)) return base;
      const t = chunkTransfer(c, i, tensors.find((x) => x.name === c.tensor)!);
      return { ...base, readAfterPhase: placed.phases!.comp[i]!, landsBeforePhase: placed.phases!.land[i]!, bytes: t.bytes, byteRuns: t.runs };
    }),
  };
}
