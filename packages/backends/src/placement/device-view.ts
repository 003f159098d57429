/**
 * What one device runs of a placed kernel: its ranks, its phases (each a dispatch: token workgroups,
 * then tiles of every local rank's range, interleaved), what each chunk part needs before this
 * device publishes it, and which peer-copy chunks it receives before and sends after each phase.
 */
import type { Module } from '@syncopate/ir';
import type { ChunkTable } from '../gpu-signal/chunk-table.js';
import type { PhasePlan } from './phases.js';

/** `need` of a part this device never publishes (it is sent from here, or neither end is here). */
export const NEVER = 0xffffffff;

export interface PhaseView {
  /** Workgroups counting a token each: one per part that is ready at launch or arrives here now. */
  readonly tokens: readonly number[];
  /** Per local rank (in `DeviceView.ranks` order): the range of its tile order run in this phase. */
  readonly tiles: readonly { readonly start: number; readonly count: number }[];
  /** Peer-copy chunks (indices) whose bytes must be in place before this phase. */
  readonly lands: readonly number[];
  /** Peer-copy chunks sent from here once this phase is done. */
  readonly sends: readonly number[];
}

export interface DeviceView {
  readonly device: number;
  readonly ranks: readonly number[];
  /** Per part: requirements before it is published here (tokens included), or NEVER. */
  readonly need: readonly number[];
  readonly phases: readonly PhaseView[];
  /** Peer-copy chunks sent from here at launch (their data is an input). */
  readonly sendsAtLaunch: readonly number[];
}

export function deviceView(module: Module, table: ChunkTable, plan: PhasePlan, rankDevice: readonly number[], device: number): DeviceView {
  const here = (rank: number) => rankDevice[rank] === device;
  const ranks = rankDevice.flatMap((d, r) => (d === device ? [r] : []));
  const tokens: number[][] = Array.from({ length: plan.phases[device]! }, () => []);
  const need = table.parts.map((part) => {
    const chunk = module.chunks[part.chunk]!;
    if (!here(chunk.dst)) return NEVER;
    if (plan.route[part.chunk] !== 'gpu-signal') {
      tokens[plan.land[part.chunk]!]!.push(part.index);
      // Forced onto one device, every requirement is counted here as usual, and the token on top.
      if (here(chunk.src)) return part.need + 1;
      // From another device: the source side is done before the token is counted; a reduce-add
      // still waits for the destination's own stores.
      return (chunk.kind === 'reduce-add' ? part.arrivals : 0) + 1;
    }
    if (part.need > 0) return part.need;
    tokens[0]!.push(part.index);
    return 1;
  });
  const phases = tokens.map((list, p): PhaseView => ({
    tokens: list,
    tiles: ranks.map((r) => {
      const phase = plan.tilePhase[r]!;
      const start = phase.findIndex((x) => x >= p);
      const end = phase.findIndex((x) => x > p);
      const s = start < 0 ? phase.length : start;
      return { start: s, count: (end < 0 ? phase.length : end) - s };
    }),
    lands: module.chunks.flatMap((c, i) => (plan.route[i] !== 'gpu-signal' && here(c.dst) && !here(c.src) && plan.land[i] === p ? [i] : [])),
    sends: module.chunks.flatMap((c, i) => (plan.route[i] !== 'gpu-signal' && here(c.src) && !here(c.dst) && plan.comp[i] === p ? [i] : [])),
  }));
  const sendsAtLaunch = module.chunks.flatMap((c, i) => (plan.route[i] !== 'gpu-signal' && here(c.src) && !here(c.dst) && plan.comp[i]! < 0 ? [i] : []));
  return { device, ranks, need, phases, sendsAtLaunch };
}

/**
 * Everything on one device, as when no chunk crosses devices: one phase with every tile, after one that
 * moves the table's line edges where it has any (gpu-signal/line-edges.ts).
 */
export function singleDeviceView(module: Module, table: ChunkTable): DeviceView {
  const tiles = module.kernel.grid.reduce((a, b) => a * b, 1);
  const ranks = Array.from({ length: module.ranks }, (_, r) => r);
  const main: PhaseView = { tokens: table.ready, tiles: ranks.map(() => ({ start: 0, count: tiles })), lands: [], sends: [] };
  const edges = table.edges ?? [];
  return {
    device: 0,
    ranks,
    need: table.parts.map((p) => (p.need === 0 ? 1 : p.need)),
    phases: edges.length === 0 ? [main] : [{ tokens: edges, tiles: ranks.map(() => ({ start: 0, count: 0 })), lands: [], sends: [] }, main],
    sendsAtLaunch: [],
  };
}
