/**
 * A cost model of the three variants: a transfer costs `latency + bytes / bandwidth` per step of the
 * plan on the busiest device; the compute costs a fixed time per tile (measured); the plan's steps
 * form a pipeline with the kernel's tiles cut into one group per step.
 *
 * - A step whose chunks feed loads (all-gather, all-to-all dispatch, ring KV) comes before the tiles
 *   that read it: group g can start once steps 1..g have landed.
 * - A step whose chunks carry stored results (reduce-scatter, combine) comes after the tiles that
 *   store it: step g can go once groups 1..g are stored and step g-1 has gone (a ring forwards sums).
 *
 * sequential = all steps, then all tiles (or the reverse); decomposed = the pipeline with a dispatch
 * boundary (and `dispatchMs`) between groups; fused = the same pipeline with no boundary, plus what
 * sharing one device costs: a chunk between ranks of one device is moved by the kernel's own
 * workgroups (gpu-signal), on the SMs and the memory the tiles use, so of the time the pipeline hides
 * a share `deviceShare` still shows (0: copies cost the tiles nothing; 1: fused is compute + comm). That
 * share is a property of the device and the kernels, not of one row: `shareOfDevice` learns it from
 * other measured rows. Where chunks cross devices through the host, a share of the queue's holds for
 * the whole pipeline instead (`queueShare`, learnt by `shareOfQueue`): the host's transfers set the
 * steps' pace and share each device's one queue with the tiles. What the model still leaves out:
 * tiles of one group do not all finish at once, a step's chunks may not all be the same size, and a
 * kernel's waits cost time even when the data is there.
 */
import type { ChunkPlan, Module, Op } from '@syncopate/ir';
import { dtypeBytes, volume } from '@syncopate/ir';
import { summarize } from './stats.js';

export interface CostModelParams {
  /** Compute time of one tile, all of a device's tiles running together (throughput). */
  readonly tileMs: number;
  /** Fixed cost of one plan step. */
  readonly latencyMs: number;
  /** Bytes a device moves per millisecond within one step. */
  readonly bytesPerMs: number;
  /** Cost of one more dispatch boundary (submit, drain, relaunch). */
  readonly dispatchMs: number;
  /** Of the time the pipeline hides, the share that shows when the copies run on the tiles' device (0–1; default 0). */
  readonly deviceShare?: number;
  /**
   * Of the time the pipeline hides, the share that shows when chunks cross devices through the host
   * (0–1; default 0): each device's one queue runs its tiles and the transfers' copies in submission
   * order, so an upload queued behind a phase lands after it, and a read-back behind one waits for it.
   */
  readonly queueShare?: number;
}

/** What the model needs of a compiled workload; see `workloadGeometry`. */
export interface WorkloadGeometry {
  /** Tiles on the busiest device (its ranks' tiles together). */
  readonly tiles: number;
  /** Bytes moved per step to the busiest device, steps in order; empty for a plan without chunks. */
  readonly stepBytes: readonly number[];
  /** Whether the steps feed loads (before the tiles) or carry stores (after them). */
  readonly direction: 'before' | 'after';
  /** Share of the moved bytes whose source and destination ranks share a device (moved by the kernel). */
  readonly localShare?: number;
}

export interface Prediction {
  readonly sequential: number;
  readonly decomposed: number;
  readonly fused: number;
  readonly computeOnly: number;
  readonly commOnly: number;
}


function tensorNames(ops: readonly Op[], kind: 'load' | 'store', into = new Set<string>()): Set<string> {
  for (const op of ops) {
    if (op.op === kind || (kind === 'load' && op.op === 'gather')) into.add((op as { tensor: string }).tensor);
    if (op.op === 'for') tensorNames(op.body, kind, into);
  }
  return into;
}

/** The geometry of `kernel` + `plan` with ranks placed by `rankDevice` (rank → device). */
export function workloadGeometry(kernel: Module, plan: ChunkPlan, rankDevice: readonly number[]): WorkloadGeometry {
  const tilesPerRank = kernel.kernel.grid.reduce((a, b) => a * b, 1);
  const perDevice = new Map<number, number>();
  for (const d of rankDevice) perDevice.set(d, (perDevice.get(d) ?? 0) + 1);
  const busiest = Math.max(...perDevice.values());
  const loaded = tensorNames(kernel.kernel.body, 'load');
  const dtypeOf = new Map(kernel.tensors.map((t) => [t.name, t.dtype]));
  // Bytes arriving on each device per step; the busiest device sets the pace. One pass over the
  // chunks (a pass per step was quadratic: a ring over 256 ranks has 255 steps and 65,280 chunks).
  const incoming = new Map<number, Map<number, number>>();
  for (const c of plan.chunks) {
    const atStep = incoming.get(c.step) ?? new Map<number, number>();
    incoming.set(c.step, atStep);
    const d = rankDevice[c.dst] ?? 0;
    atStep.set(d, (atStep.get(d) ?? 0) + volume(c.region) * dtypeBytes(dtypeOf.get(c.tensor) ?? 'f32'));
  }
  const steps = [...incoming.keys()].sort((a, b) => a - b);
  const stepBytes = steps.map((step) => Math.max(0, ...incoming.get(step)!.values()));
  const feedsLoads = plan.chunks.some((c) => loaded.has(c.tensor) && (c.kind ?? 'copy') === 'copy');
  const bytes = (local: boolean) => plan.chunks.filter((c) => (rankDevice[c.src] === rankDevice[c.dst]) === local).reduce((n, c) => n + volume(c.region), 0);
  const local = bytes(true);
  const localShare = local + bytes(false) > 0 ? local / (local + bytes(false)) : 0;
  return { tiles: busiest * tilesPerRank, stepBytes, direction: feedsLoads ? 'before' : 'after', localShare };
}

/**
 * Bytes each device sends to the others and gets from them under `plan`, ranks placed by `rankDevice`
 * (chunks between ranks of one device stay): what its one queue reads back and uploads. A source
 * region sent to several ranks of one device crosses once (the transfer's byte runs merge: a one-shot
 * all-gather's shard for two ranks there).
 */
export function crossDeviceBytes(kernel: Module, plan: ChunkPlan, rankDevice: readonly number[]): { readonly sent: number; readonly received: number }[] {
  const dtypeOf = new Map(kernel.tensors.map((t) => [t.name, t.dtype]));
  const out = Array.from({ length: Math.max(...rankDevice) + 1 }, () => ({ sent: 0, received: 0 }));
  const crossed = new Set<string>();
  for (const c of plan.chunks) {
    const [from, to] = [rankDevice[c.src] ?? 0, rankDevice[c.dst] ?? 0];
    const key = `${c.tensor} ${c.src} ${c.region.lo.join()}/${c.region.hi.join()} -> ${to}`;
    if (from === to || crossed.has(key)) continue;
    crossed.add(key);
    const bytes = volume(c.region) * dtypeBytes(dtypeOf.get(c.tensor) ?? 'f32');
    out[from]!.sent += bytes;
    out[to]!.received += bytes;
  }
  return out;
}

/** The three variants' times (and the two parts alone) under `params`. */
export function predict(g: WorkloadGeometry, p: CostModelParams): Prediction {
  return predictSteps(g, g.stepBytes.map((b) => p.latencyMs + b / p.bytesPerMs), p);
}

/** The three variants' times given each step's time on the busiest device, in order. */
function predictSteps(g: Omit<WorkloadGeometry, 'stepBytes'>, comm: readonly number[], p: CostModelParams): Prediction {
  const computeOnly = g.tiles * p.tileMs;
  const commOnly = comm.reduce((a, b) => a + b, 0);
  const steps = comm.length;
  if (steps === 0) return { sequential: computeOnly, decomposed: computeOnly, fused: computeOnly, computeOnly, commOnly };
  // One group of tiles per step, plus the tiles that need no chunk (their own data) as group 0.
  const group = computeOnly / (steps + 1);
  const pipeline = (boundaryMs: number): number => {
    if (g.direction === 'before') {
      // Group 0 runs at once; group s after step s has landed and group s-1 is done.
      let landed = 0;
      let done = group;
      for (const c of comm) {
        landed += c;
        done = Math.max(done + boundaryMs, landed) + group;
      }
      return done;
    }
    // Groups first; step s goes once group s is stored and step s-1 has gone.
    let stored = 0;
    let sent = 0;
    for (const c of comm) {
      stored += group + boundaryMs;
      sent = Math.max(sent, stored) + c;
    }
    return Math.max(sent, stored + group);
  };
  const hidden = computeOnly + commOnly - pipeline(0);
  // Where any chunk crosses devices, the steps go at the pace of the host's transfers: the queue's
  // share holds for the whole; else the device's, for the share of bytes the kernel moves itself.
  const local = g.localShare ?? 0;
  const shown = local < 1 && p.queueShare !== undefined ? p.queueShare : (p.deviceShare ?? 0) * local;
  const fused = pipeline(0) + shown * Math.max(0, hidden);
  return { sequential: computeOnly + commOnly, decomposed: pipeline(p.dispatchMs), fused, computeOnly, commOnly };
}

/** The link between nodes, as one device sees it: bytes it receives per millisecond, and a fixed cost per step. */
export interface InterNodeLink {
  readonly bytesPerMs: number;
  readonly latencyMs: number;
}

/** Devices on `nodes` nodes of `gpusPerNode` each (device d on node ⌊d / gpusPerNode⌋), and the link between the nodes. */
export interface NodeLayout {
  readonly nodes: number;
  readonly gpusPerNode: number;
  readonly interNode: InterNodeLink;
}

/** Bytes one device receives in one step: from devices of its own node, and from other nodes. */
export interface LinkBytes {
  readonly intra: number;
  readonly inter: number;
}

/** A workload's geometry with each step's bytes split by the link they arrive on; see `nodeGeometry`. */
export interface NodeGeometry extends WorkloadGeometry {
  /** Per step (in the order of `stepBytes`), per device: what it receives over each link. */
  readonly stepLinks: readonly (readonly LinkBytes[])[];
}

/**
 * The geometry of `kernel` + `plan` with ranks placed by `rankDevice` on `nodes` nodes of
 * `gpusPerNode` devices. A chunk between ranks of one device, or of two devices on one node, arrives
 * within the node. Throws RangeError where the devices do not fit on the nodes.
 */
export function nodeGeometry(kernel: Module, plan: ChunkPlan, rankDevice: readonly number[], layout: Pick<NodeLayout, 'nodes' | 'gpusPerNode'>): NodeGeometry {
  const { nodes, gpusPerNode } = layout;
  if (!(Number.isInteger(nodes) && nodes > 0 && Number.isInteger(gpusPerNode) && gpusPerNode > 0)) {
    throw new RangeError(`nodeGeometry: nodes and gpusPerNode must be positive integers, got ${nodes} and ${gpusPerNode}`);
  }
  const devices = Math.max(0, ...rankDevice) + 1;
  if (devices > nodes * gpusPerNode) throw new RangeError(`nodeGeometry: ${devices} devices do not fit on ${nodes} nodes of ${gpusPerNode}`);
  const node = (rank: number) => Math.floor((rankDevice[rank] ?? 0) / gpusPerNode);
  const dtypeOf = new Map(kernel.tensors.map((t) => [t.name, t.dtype]));
  const geometry = workloadGeometry(kernel, plan, rankDevice);
  const steps = [...new Set(plan.chunks.map((c) => c.step))].sort((a, b) => a - b);
  const index = new Map(steps.map((step, i) => [step, i]));
  const stepLinks = steps.map(() => Array.from({ length: devices }, () => ({ intra: 0, inter: 0 })));
  for (const c of plan.chunks) {
    const into = stepLinks[index.get(c.step)!]![rankDevice[c.dst] ?? 0]!;
    const bytes = volume(c.region) * dtypeBytes(dtypeOf.get(c.tensor) ?? 'f32');
    if (node(c.src) === node(c.dst)) into.intra += bytes;
    else into.inter += bytes;
  }
  return { ...geometry, stepLinks };
}

/**
 * The three variants of a workload placed on several nodes (`nodeGeometry`): chunks within a node
 * move at the fitted `p.bytesPerMs` after `p.latencyMs`, chunks between nodes at `interNode`'s rate
 * after its latency. A device's two links work side by side, so its step takes the longer of its two
 * links' times (the slower link it uses sets it), and the step the longest over the devices; the
 * pipeline is `predict`'s. On one node it is `predict`. Where a device's chunks of one step share a
 * path the model does not see (both links through the same host staging), it is a lower bound.
 */
export function predictOnNodes(g: NodeGeometry, p: CostModelParams, interNode: InterNodeLink): Prediction {
  const over = (bytes: number, latencyMs: number, bytesPerMs: number) => (bytes > 0 ? latencyMs + bytes / bytesPerMs : 0);
  const comm = g.stepLinks.map((devices) => Math.max(0, ...devices.map((d) => Math.max(over(d.intra, p.latencyMs, p.bytesPerMs), over(d.inter, interNode.latencyMs, interNode.bytesPerMs)))));
  return predictSteps(g, comm, p);
}

/** A measured row: its geometry, the parameters it is predicted with, its fused time. */
export interface MeasuredRow {
  readonly geometry: WorkloadGeometry;
  readonly params: CostModelParams;
  readonly fusedMs: number;
}

/** The share of the row's hidden time that its fused run showed; undefined where the pipeline hides nothing. */
function shownShare({ geometry, params, fusedMs }: MeasuredRow): number | undefined {
  const p = predict(geometry, { ...params, deviceShare: 0, queueShare: 0 });
  const hidden = p.computeOnly + p.commOnly - p.fused;
  return hidden <= 1e-9 ? undefined : (fusedMs - p.fused) / hidden;
}

/** The shown shares of the rows `keep` picks (rows whose pipeline hides nothing tell nothing), clamped to 0–1; their median, 0 for none. */
function medianShare(rows: readonly MeasuredRow[], keep: (row: MeasuredRow) => boolean): number {
  const shares = rows.flatMap((row) => {
    const share = keep(row) ? shownShare(row) : undefined;
    return share === undefined ? [] : [Math.min(1, Math.max(0, share))];
  });
  return shares.length === 0 ? 0 : summarize(shares).median;
}

/**
 * The share of hidden time that shows on a shared device, from measured rows whose chunks all stay
 * within a device: per row, where the pipeline would hide time, (fused − pipeline) / (compute + comm −
 * pipeline), clamped to 0–1; the median of the rows (robust to a row whose kernel is slow for reasons
 * the model leaves out). Fit it on rows other than the one predicted (modelBench leaves each
 * configuration out), so that no row's fused time predicts itself. 0 when no row tells.
 */
export function shareOfDevice(rows: readonly MeasuredRow[]): number {
  return medianShare(rows, (row) => row.geometry.localShare === 1);
}

/**
 * The share of hidden time that shows when chunks cross devices (CostModelParams.queueShare), the
 * same way from measured rows that move bytes between devices. Learn it per direction: on two H200s,
 * where transfers feed loads the fused runs hid little of the communication (uploads queue behind the
 * phase beside them), where they carry results out, more (benchmarks/README.md).
 */
export function shareOfQueue(rows: readonly MeasuredRow[]): number {
  return medianShare(rows, (row) => (row.geometry.localShare ?? 0) < 1);
}

/**
 * Parameters from measurements: the compute-only time gives `tileMs`; the comm-only times of several
 * geometries give latency and bandwidth by least squares over (steps, bytes) (latency 0 when only one
 * geometry is given); `dispatchMs` is measured separately (default 0).
 */
export function fitParams(samples: readonly { geometry: WorkloadGeometry; computeOnlyMs: number; commOnlyMs: number }[], dispatchMs = 0): CostModelParams {
  if (samples.length === 0) throw new RangeError('fitParams needs at least one measured sample');
  const tileMs = samples.reduce((a, s) => a + s.computeOnlyMs / s.geometry.tiles, 0) / samples.length;
  // commOnly = steps·latency + bytes/bandwidth: two unknowns, least squares through the origin.
  const rows = samples.map((s) => ({ x1: s.geometry.stepBytes.length, x2: s.geometry.stepBytes.reduce((a, b) => a + b, 0), y: s.commOnlyMs }));
  const s11 = rows.reduce((a, r) => a + r.x1 * r.x1, 0);
  const s12 = rows.reduce((a, r) => a + r.x1 * r.x2, 0);
  const s22 = rows.reduce((a, r) => a + r.x2 * r.x2, 0);
  const s1y = rows.reduce((a, r) => a + r.x1 * r.y, 0);
  const s2y = rows.reduce((a, r) => a + r.x2 * r.y, 0);
  const det = s11 * s22 - s12 * s12;
  let latencyMs = 0;
  let perByte = s22 > 0 ? s2y / s22 : 0;
  if (Math.abs(det) > 1e-12 * s11 * s22) {
    latencyMs = (s22 * s1y - s12 * s2y) / det;
    perByte = (s11 * s2y - s12 * s1y) / det;
    // A negative latency or bandwidth fits noise, not a link: keep the one-parameter fit instead.
    if (latencyMs < 0 || perByte <= 0) {
      latencyMs = 0;
      perByte = s2y / s22;
    }
  }
  return { tileMs, latencyMs, bytesPerMs: perByte > 0 ? 1 / perByte : Infinity, dispatchMs };
}
