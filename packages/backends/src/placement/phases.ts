/**
 * Phases: how a kernel runs when some chunks cross devices. WebGPU devices share no memory, so a
 * chunk between devices travels through the host, between dispatches. Each device runs its ranks'
 * tiles as a sequence of dispatches (phases), each a contiguous range of every local rank's tile
 * order; chunks within a device keep the gpu-signal protocol inside a phase.
 *
 * For a chunk that goes by peer-copy:
 *  - `comp`: the phase on the source device after which its data is final (its source tiles have
 *    stored, what it forwards has been published); −1 means at launch. The host reads it then.
 *  - `land`: the phase on the destination device whose first workgroups count it as arrived (a
 *    token); the host puts its bytes in place before submitting that phase. Its parts are published
 *    once the token and the destination's own stores (for a reduce-add) are counted. It is always
 *    later than `comp`, so the devices never wait on each other in a cycle.
 * Tile phases follow each rank's order and cut it: before the first tile that waits on a chunk that
 * arrives by peer-copy (so compute before it overlaps the transfer), after the last tile that a
 * peer-copy chunk sends (so the transfer overlaps the compute after it; for the chunks a rank sends
 * to another device, after the last of them, so they leave as one transfer), and wherever a tile waits on
 * a gpu-signal chunk published in a later phase. All of it is a least fixed point of monotone
 * rules, found by iteration; a plan whose rules have none (a cycle of waits) is rejected.
 */
import type { ChunkDecl, Module } from '@syncopate/ir';
import { rankSchedule } from '../wgsl/tables.js';
import { arrivalTiles, useMeetsTile, waiterOf, type ChunkUse } from '@syncopate/passes';
import { alignedModule } from '../gpu-signal/alignment.js';
import { forwards } from '../gpu-signal/chunk-table.js';

/**
 * How a chunk travels once ranks are placed on devices: within a device (gpu-signal), between two
 * devices of one process through its host (peer-copy), or between processes (mpi).
 */
export type ChunkRoute = 'gpu-signal' | 'peer-copy' | 'mpi';

export interface PhasePlan {
  /** Per rank, per position of its tile order: the phase the tile runs in. */
  readonly tilePhase: readonly (readonly number[])[];
  /** Per chunk: how it travels. */
  readonly route: readonly ChunkRoute[];
  /** Per chunk by peer-copy: the source device's phase after which it can be read (−1: at launch). */
  readonly comp: readonly number[];
  /** Per chunk by peer-copy: the destination device's phase that counts its arrival. */
  readonly land: readonly number[];
  /** Per chunk: the phase (on its destination's device) in which it is published, at the latest. */
  readonly pub: readonly number[];
  /** Per device: its phase count. */
  readonly phases: readonly number[];
  /** How it was cut (PhaseOptions.phasing): 'overlap' runs transfers beside compute, 'sequential' never. */
  readonly phasing: 'overlap' | 'sequential';
}

export class PhaseError extends Error {
  constructor(
    message: string,
    readonly chunks: readonly string[],
  ) {
    super(message);
  }
}

interface RankTiles {
  /** Chunk indices each position waits on. */
  readonly waits: number[][];
  /** Chunk indices each position arrives at (as source, or as a reduce-add's destination). */
  readonly arrives: number[][];
  /** Chunk index → the first position that waits on it. */
  readonly firstWaiter: ReadonlyMap<number, number>;
}

const isLocalRank = (rankDevice: readonly number[], a: number, b: number) => rankDevice[a] === rankDevice[b];

/**
 * Which route each chunk takes: between devices of different processes (`deviceProcess`, per
 * device; all in one process without it) mpi, else its backend where the plan forces one, else by
 * placement.
 */
export function chunkRoutes(module: Module, rankDevice: readonly number[], deviceProcess?: readonly number[]): ChunkRoute[] {
  const processOf = (rank: number) => deviceProcess?.[rankDevice[rank]!] ?? 0;
  return module.chunks.map((c) => {
    const sameDevice = isLocalRank(rankDevice, c.src, c.dst);
    if (c.backend === 'gpu-signal' && !sameDevice) {
      throw new PhaseError(
        `chunk %${c.value.name} is forced to gpu-signal, but ranks ${c.src} and ${c.dst} are on devices ` +
          `${rankDevice[c.src]} and ${rankDevice[c.dst]}: gpu-signal needs both on one device (use auto or peer-copy)`,
        [c.value.name],
      );
    }
    if (processOf(c.src) !== processOf(c.dst)) return 'mpi';
    return c.backend === 'peer-copy' || !sameDevice ? 'peer-copy' : 'gpu-signal';
  });
}

function rankTiles(lowered: Module, rank: number, index: ReadonlyMap<ChunkDecl, number>, rankDevice: readonly number[]): RankTiles {
  const { module, alignment } = alignedModule(lowered);
  const order = rankSchedule(module.kernel.scheduler.order, module.kernel.grid, rank);
  // A neighbour's chunk that shares a cache line with this rank's copy matters only on one device (one buffer).
  const waitUses: ChunkUse[] = alignment.waits.filter((u) => waiterOf(u) === rank && (u.rank === undefined || isLocalRank(rankDevice, rank, u.chunk.dst)));
  const arrivalBoxes = module.chunks.flatMap((c) => {
    const box = c.src === rank || (c.kind === 'reduce-add' && c.dst === rank) ? arrivalTiles(alignment, c) : undefined;
    return box ? [{ chunk: index.get(c)!, box }] : [];
  });
  const inBox = (tile: readonly number[], box: { lo: readonly number[]; hi: readonly number[] }) =>
    tile.every((x, i) => x >= box.lo[i]! && x < box.hi[i]!);
  const waits = order.map((tile) => [...new Set(waitUses.filter((u) => useMeetsTile(module, u, tile)).map((u) => index.get(u.chunk)!))]);
  const firstWaiter = new Map<number, number>();
  waits.forEach((cs, i) => cs.forEach((c) => firstWaiter.has(c) || firstWaiter.set(c, i)));
  return { waits, arrives: order.map((tile) => arrivalBoxes.filter((a) => inBox(tile, a.box)).map((a) => a.chunk)), firstWaiter };
}

/**
 * The phases of every rank's tiles and the comp/land phases of every peer-copy chunk, for ranks
 * placed on devices by `rankDevice`. Throws PhaseError for a plan that cannot be scheduled.
 */
export interface PhaseOptions {
  /**
   * `overlap` (default): the cuts above, so transfers run beside compute. `sequential`: a baseline
   * without overlap: no cuts; on a device whose tiles wait for peer-copy chunks, every tile runs after
   * the last of them has landed (the whole collective, then the kernel); sent chunks leave after the
   * tiles that make them (the kernel, then the collective).
   */
  readonly phasing?: 'overlap' | 'sequential';
  /** Per device, the process that runs it (chunkRoutes); all one process without it. */
  readonly deviceProcess?: readonly number[];
}

export function planPhases(module: Module, rankDevice: readonly number[], options: PhaseOptions = {}): PhasePlan {
  const sequential = options.phasing === 'sequential';
  const chunks = module.chunks;
  const route = chunkRoutes(module, rankDevice, options.deviceProcess);
  const index = new Map(chunks.map((c, i) => [c, i]));
  const tiles = Array.from({ length: module.ranks }, (_, r) => rankTiles(module, r, index, rankDevice));
  // Through a host, in this process or between processes: between dispatches either way.
  const remote = (c: number) => route[c] !== 'gpu-signal';
  const feeders = chunks.map((c) => chunks.flatMap((d, j) => (forwards(c, d) ? [j] : [])));
  const forwarded = chunks.map((_, i) => feeders.some((f) => f.includes(i)));
  // Positions after which a rank's order is cut because a peer-copy chunk's last source tile is done.
  // Chunks for another device are cut for together, after the last of them: they leave through the
  // host, where each transfer costs round trips whatever its size, so one transfer a destination
  // device beats one a chunk. Chunks forced to peer-copy within a device keep a cut each.
  const sendCuts = tiles.map((t, r) => {
    if (sequential) return new Set<number>();
    const last = new Map<number | string, number>();
    const group = (c: number) => (isLocalRank(rankDevice, r, chunks[c]!.dst) ? c : `device ${rankDevice[chunks[c]!.dst]}`);
    t.arrives.forEach((cs, i) => cs.forEach((c) => remote(c) && chunks[c]!.src === r && last.set(group(c), i)));
    return new Set(last.values());
  });
  const byStep = chunks.map((_, i) => i).sort((a, b) => chunks[a]!.step - chunks[b]!.step || a - b);
  // Chunks whose bytes come from another device, directly or forwarded within one (to a fixed point:
  // forwards point to later steps, but nothing here relies on it).
  const fromElsewhere = chunks.map((_, c) => remote(c));
  for (let changed = true; changed; ) {
    changed = false;
    chunks.forEach((_, c) => {
      if (!fromElsewhere[c] && feeders[c]!.some((d) => fromElsewhere[d])) changed = fromElsewhere[c] = true;
    });
  }
  // Per rank: how many of its first tiles need nothing from another device (they can run at once).
  const ownPrefix = tiles.map((t) => {
    const n = t.waits.findIndex((cs) => cs.some((c) => fromElsewhere[c]));
    return n < 0 ? t.waits.length : n;
  });

  let tilePhase = tiles.map((t) => t.waits.map(() => 0));
  const comp = chunks.map(() => -1);
  const land = chunks.map(() => 0);
  const pub = chunks.map(() => 0);
  const limit = 4 + chunks.length + tiles.reduce((n, t) => n + t.waits.length, 0);
  for (let iteration = 0; ; iteration++) {
    if (iteration > limit) {
      const names = chunks.filter((_, c) => remote(c)).map((c) => c.value.name);
      throw new PhaseError(`the chunks ${names.map((n) => `%${n}`).join(', ')} cannot be put in phases: their waits form a cycle`, names);
    }
    // Per chunk, from the tile phases: when its source side and its destination side have stored.
    const srcDone = chunks.map(() => -1);
    const dstDone = chunks.map(() => -1);
    tiles.forEach((t, r) =>
      t.arrives.forEach((cs, i) => {
        for (const c of cs) {
          const side = chunks[c]!.src === r ? srcDone : dstDone;
          side[c] = Math.max(side[c]!, tilePhase[r]![i]!);
        }
      }),
    );
    // Where a chunk's first waiter starts a phase: right after the tile before it, so that the
    // transfer overlaps what comes before. For a chunk something forwards, only where every tile
    // before it needs nothing from another device (phase 1, after those tiles): tying it to later
    // tiles would hold back its whole chain, and around a ring the tiles before it wait on the chain
    // itself, so the gate would chase them without end.
    const gate = chunks.map((c, i) => {
      if (sequential) return undefined;
      const first = tiles[c.dst]!.firstWaiter.get(i);
      if (first === undefined) return undefined;
      if (forwarded[i]) return first > 0 && first <= ownPrefix[c.dst]! ? 1 : undefined;
      return first === 0 ? 0 : tilePhase[c.dst]![first - 1]! + 1;
    });
    // A copy nobody on its device reads lands after the device's last tiles: landing it sooner would
    // hold back a phase whose tiles (any local rank's) do not need it, while it is in flight.
    const lastDevicePhase = Array.from({ length: Math.max(...rankDevice) + 1 }, () => 0);
    tilePhase.forEach((p, r) => (lastDevicePhase[rankDevice[r]!] = Math.max(lastDevicePhase[rankDevice[r]!]!, p[p.length - 1] ?? 0)));
    for (const c of byStep) {
      const chunk = chunks[c]!;
      const fed = Math.max(-1, ...feeders[c]!.map((d) => pub[d]!));
      if (!remote(c)) {
        pub[c] = Math.max(0, srcDone[c]!, dstDone[c]!, fed);
        continue;
      }
      comp[c] = Math.max(srcDone[c]!, fed);
      // A reduce-add lands once the destination's own stores are done (so the wait for it holds back
      // no compute); a copy nobody reads there, at the end, unless something forwards it.
      const waited = tiles[chunk.dst]!.firstWaiter.has(c);
      const at = gate[c] ?? (chunk.kind === 'reduce-add' ? dstDone[c]! + 1 : waited || forwarded[c] ? 0 : lastDevicePhase[rankDevice[chunk.dst]!]! + 1);
      // Phase numbers act as one clock for all devices: a chunk lands in a later phase than the one
      // that completes it. Every wait between devices then points forward, so none can form a cycle
      // (and a chain of forwards, as in a ring, gets a phase per link).
      land[c] = Math.max(0, comp[c]! + 1, at);
      pub[c] = Math.max(land[c]!, dstDone[c]!);
    }
    // Sequential: a device's tiles all start after the last peer-copy chunk any of them waits for.
    const collectiveDone = Array.from({ length: Math.max(...rankDevice) + 1 }, () => 0);
    if (sequential) {
      tiles.forEach((t, r) =>
        t.waits.forEach((cs) => cs.forEach((c) => remote(c) && (collectiveDone[rankDevice[r]!] = Math.max(collectiveDone[rankDevice[r]!]!, land[c]! + 1)))),
      );
    }
    const next = tiles.map((t, r) => {
      const phases: number[] = [];
      t.waits.forEach((cs, i) => {
        const previous = i === 0 ? collectiveDone[rankDevice[r]!]! : phases[i - 1]!;
        let lo = previous;
        if (i > 0 && sendCuts[r]!.has(i - 1)) lo = previous + 1;
        for (const c of cs) {
          if (!remote(c)) lo = Math.max(lo, pub[c]!);
          else {
            lo = Math.max(lo, land[c]!);
            if (gate[c] !== undefined && t.firstWaiter.get(c) === i) lo = Math.max(lo, previous + 1);
          }
        }
        phases.push(lo);
      });
      return phases;
    });
    const stable = next.every((p, r) => p.every((x, i) => x === tilePhase[r]![i]));
    tilePhase = next;
    if (stable) break;
  }

  const devices = Math.max(...rankDevice) + 1;
  const phases = Array.from({ length: devices }, () => 1);
  const atLeast = (device: number, phase: number) => (phases[device] = Math.max(phases[device]!, phase + 1));
  tilePhase.forEach((p, r) => p.forEach((x) => atLeast(rankDevice[r]!, x)));
  chunks.forEach((c, i) => atLeast(rankDevice[c.dst]!, remote(i) ? land[i]! : pub[i]!));
  return { tilePhase, route, comp, land, pub, phases, phasing: sequential ? 'sequential' : 'overlap' };
}
