/**
 * A kernel whose ranks are placed on several devices: one FusedSession per device, and the host
 * moving peer-copy chunks between them. Each device submits its phases in order; before a phase it
 * waits (bounded) until the chunks that land in it are on its queue, and right after submitting a
 * phase it starts the transfers of the chunks that phase completed. So the copy of one phase's
 * chunks overlaps the next phases' compute on both devices.
 *
 * Under an MPI job (`processes`), each process runs the devices it opened: a chunk between two of its
 * devices moves as above, one to or from a device of another process goes through the process group
 * (runtime's process-transfer.ts), received straight into the destination's mapped staging.
 */
import { placedTransfers, TransferAlignmentError, type ByteRun, type PlacedKernels, type PlacedTransfer } from '@syncopate/backends';
import { print as printModule, type Module } from '@syncopate/ir';
import * as RNEA from 'fp-ts/lib/ReadonlyNonEmptyArray.js';
import { GpuTimeoutError, messageCount, PeerCopier, receiveRuns, sendRuns, type DeviceHandle, type PeerCopierOptions, type RunResult, type TransferStages } from '@syncopate/runtime';
import { checkSamePlan, nextSessionTag, SESSION_TAG_BITS, type ProcessPlacement } from './processes.js';
import type { RunRecording } from './run-recording.js';
import { FusedSession } from './session.js';
import { UsageError } from './usage-error.js';
import type { TensorData } from './row-major.js';

interface Deferred {
  readonly promise: Promise<void>;
  resolve(): void;
  reject(e: unknown): void;
}

/** A chunk's bytes, the devices it goes between and the ranks it goes between (for errors). */
interface Route extends PlacedTransfer {
  readonly fromRank: number;
  readonly toRank: number;
  /** The destination's phase that waits for it. */
  readonly landsBefore: number;
}

/**
 * The chunks one device sends at one moment (at launch, or after a phase) to one destination device,
 * of one tensor, for one landing phase: they travel as one transfer. Every process lists the same
 * transfers in the same order, so the two ends of one between processes agree on its tags.
 */
interface TransferGroup {
  readonly from: number;
  readonly to: number;
  readonly tensor: string;
  readonly routes: readonly Route[];
  readonly runs: readonly ByteRun[];
  readonly label: string;
  /** Between processes: its first message tag. */
  readonly tag?: number;
}

/** Each crossing chunk's runs in whole words; what cannot be moved so is the caller's to change (UsageError). */
function aligned(module: Module, placed: PlacedKernels): Map<number, PlacedTransfer> {
  try {
    return placedTransfers(module, placed);
  } catch (e) {
    if (e instanceof TransferAlignmentError) throw new UsageError(e.message);
    throw e;
  }
}

/** Byte runs sorted, and those that overlap or touch made one (two chunks may carry the same bytes). */
function mergeRuns(runs: readonly ByteRun[]): ByteRun[] {
  const merged: ByteRun[] = [];
  for (const r of [...runs].sort((a, b) => a.offset - b.offset)) {
    const last = merged[merged.length - 1];
    if (last && r.offset <= last.offset + last.bytes) merged[merged.length - 1] = { offset: last.offset, bytes: Math.max(last.bytes, r.offset + r.bytes - last.offset) };
    else merged.push(r);
  }
  return merged;
}

/** Whether two sorted, merged lists of byte runs share a byte. */
function runsOverlap(a: readonly ByteRun[], b: readonly ByteRun[]): boolean {
  for (let i = 0, j = 0; i < a.length && j < b.length; ) {
    if (a[i]!.offset + a[i]!.bytes <= b[j]!.offset) i++;
    else if (b[j]!.offset + b[j]!.bytes <= a[i]!.offset) j++;
    else return true;
  }
  return false;
}

function deferred(): Deferred {
  let resolve!: () => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<void>((res, rej) => ((resolve = res), (reject = rej)));
  promise.catch(() => undefined); // a transfer nobody waited for must not become an unhandled rejection
  return { promise, resolve, reject };
}

/** The transfers of each device's sends, per moment: [at launch, after phase 0, after phase 1, ...]. */
function transferGroups(placed: PlacedKernels, transfers: ReadonlyMap<number, Route>): TransferGroup[][][] {
  return placed.devices.map(({ view }) =>
    [view.sendsAtLaunch, ...view.phases.map((p) => p.sends)].map((chunks) => {
      // The earliest landing goes first: what one phase waits for should not wait for what a later one needs.
      const routes = chunks.map((c) => transfers.get(c)!).sort((a, b) => a.landsBefore - b.landsBefore);
      if (routes.length === 0) return [];
      return Object.values(RNEA.groupBy((t: Route) => `${t.to} ${t.tensor} ${t.landsBefore}`)(routes)).map((group) => ({
        from: RNEA.head(group).from,
        to: RNEA.head(group).to,
        tensor: RNEA.head(group).tensor,
        routes: group,
        runs: mergeRuns(group.flatMap((t) => t.runs)),
        label: `of ${group.map((t) => `chunk ${t.chunk} %${t.name} (rank ${t.fromRank} -> rank ${t.toRank})`).join(', ')}`,
      }));
    }),
  );
}

export interface PlacedSessionOptions {
  /** Longest wait on any one GPU promise or transfer (default 30 s). */
  readonly timeoutMs?: number;
  /** Tensors that will be read back. */
  readonly read?: readonly string[];
  /** How the host moves chunks between devices (pieces, ring depth); PeerCopier's defaults otherwise. */
  readonly peerCopy?: Omit<PeerCopierOptions, 'timeoutMs'>;
  /** A copier to use (and leave open) instead of one of the session's own, e.g. shared by sessions timed side by side. */
  readonly copier?: PeerCopier;
  /**
   * Under an MPI job: which process opens each device, and the group. `devices` then holds this
   * process's devices at their indices and nothing elsewhere. Every process must open its sessions
   * in the same order (their messages are told apart by it), and checks at open that all placed the
   * same plan (PlanMismatchError otherwise).
   */
  readonly processes?: ProcessPlacement;
}

export class PlacedSession {
  private constructor(
    private readonly placed: PlacedKernels,
    private readonly devices: readonly (DeviceHandle | undefined)[],
    /** Per device: its session, where this process runs it. */
    private readonly sessions: readonly (FusedSession | undefined)[],
    private readonly transfers: ReadonlyMap<number, Route>,
    /** Per device, per moment (at launch, after each phase): the transfers it starts. */
    private readonly groups: readonly (readonly (readonly TransferGroup[])[])[],
    private readonly copier: PeerCopier,
    private readonly ownsCopier: boolean,
    private readonly timeoutMs: number,
    private readonly processes: ProcessPlacement | undefined,
  ) {}

  /** `devices[d]` runs `placed.devices[d]`; every device gets every input (the copies of ranks elsewhere are mailboxes). */
  static async open(devices: readonly (DeviceHandle | undefined)[], module: Module, placed: PlacedKernels, inputs: TensorData, options: PlacedSessionOptions = {}): Promise<PlacedSession> {
    return PlacedSession.start(devices, module, placed, options, (device, kernel) => FusedSession.open(device, kernel, inputs, options));
  }

  /** As `open`, but the tensors are the caller's: bind them (`bindTensors`) before each run. */
  static async prepare(devices: readonly (DeviceHandle | undefined)[], module: Module, placed: PlacedKernels, options: PlacedSessionOptions = {}): Promise<PlacedSession> {
    return PlacedSession.start(devices, module, placed, options, (device, kernel) => FusedSession.prepare(device, kernel, options));
  }

  private static async start(
    devices: readonly (DeviceHandle | undefined)[],
    module: Module,
    placed: PlacedKernels,
    options: PlacedSessionOptions,
    session: (device: DeviceHandle, kernel: PlacedKernels['devices'][number]['kernel']) => Promise<FusedSession>,
  ): Promise<PlacedSession> {
    const processes = options.processes;
    const here = (d: number) => processes === undefined || processes.deviceProcess[d] === processes.group.rank;
    const opened = processes ? processes.deviceProcess.length : devices.length;
    if (opened < placed.devices.length || (processes && opened !== placed.devices.length)) {
      throw new UsageError(`the kernels are placed on ${placed.devices.length} devices, but ${processes ? 'the processes open' : 'were given'} ${opened}`);
    }
    const missing = placed.devices.findIndex((_, d) => here(d) && devices[d] === undefined);
    if (missing >= 0) throw new UsageError(`device ${missing}, one of this process's, was not given`);
    const transfers = new Map<number, Route>();
    for (const [i, t] of aligned(module, placed)) {
      const c = module.chunks[i]!;
      const landsBefore = placed.devices[t.to]!.view.phases.findIndex((p) => p.lands.includes(i));
      transfers.set(i, { ...t, fromRank: c.src, toRank: c.dst, landsBefore });
    }
    const timeoutMs = options.timeoutMs ?? 30_000;
    const copier = options.copier ?? new PeerCopier({ ...options.peerCopy, timeoutMs });
    let groups = transferGroups(placed, transfers);
    if (processes) {
      // Before any device work: a process that placed another plan would wait for chunks never sent.
      await checkSamePlan(processes.group, 'placed plan', placedPlanText(module, placed, processes, copier));
      groups = withTags(groups, processes, copier);
    }
    const sessions: (FusedSession | undefined)[] = [];
    try {
      for (const [d, { kernel }] of placed.devices.entries()) sessions.push(here(d) ? await session(devices[d]!, kernel) : undefined);
    } catch (e) {
      sessions.forEach((s) => s?.destroy());
      if (options.copier === undefined) copier.destroy();
      throw e;
    }
    return new PlacedSession(placed, devices, sessions, transfers, groups, copier, options.copier === undefined, timeoutMs, processes);
  }

  /** The buffers each device's kernel binds from now on: `perDevice[d]` for device d (FusedSession.bindTensors); this process's devices only. */
  bindTensors(perDevice: readonly (ReadonlyMap<string, GPUBuffer> | undefined)[]): void {
    this.sessions.forEach((s, d) => s?.bindTensors(perDevice[d]!));
  }

  /** Bytes moved between devices per run. */
  get transferBytes(): number {
    return [...this.transfers.values()].reduce((n, t) => n + t.bytes, 0);
  }

  /** The transfers from other processes to this one's devices, in the order they land. */
  private get receives(): TransferGroup[] {
    const landsBefore = (g: TransferGroup) => g.routes[0]!.landsBefore;
    const from = this.groups.flatMap((moments, d) => (this.isLocal(d) ? [] : moments.flat().filter((g) => this.isLocal(g.to))));
    return from.sort((a, b) => landsBefore(a) - landsBefore(b));
  }

  private isLocal(device: number): boolean {
    return this.sessions[device] !== undefined;
  }

  /** "device 1 (process 1 on host b)" for a device of another process. */
  private remoteDevice(device: number): string {
    const p = this.processes!.deviceProcess[device]!;
    return `device ${device} (process ${p} on host ${this.processes!.group.hosts[p]})`;
  }

  /**
   * One run over all devices; `wallMs` from the first submit until every device is done. With
   * `overlap: false` (a baseline for benchmarks) each device waits for every phase to finish and for
   * its chunks to land before going on, so no transfer runs beside that device's compute.
   * With `record`, the dispatches, transfers and waits for landings go into it (trace.ts draws them),
   * every phase timed on the GPU too where the device has timestamp queries and the recording asks.
   * With `communicationOnly`, the phases that run tiles are not launched (their waits and sends still
   * happen): what is left is the run's communication alone, the chunk moves inside each device and
   * the transfers between them, in the same order (benchmarks time it so).
   * Under an MPI job every process starts the run together (a barrier), runs its own devices, and
   * `wallMs` is this process's.
   */
  async run(options: { readonly overlap?: boolean; readonly record?: RunRecording; readonly communicationOnly?: boolean } = {}): Promise<RunResult> {
    const overlap = options.overlap ?? true;
    const record = options.record;
    const landed = new Map([...this.transfers.keys()].map((c) => [c, deferred()]));
    // Every transfer started (each settles: a failure goes to `fail`).
    const transfers: Promise<void>[] = [];
    let failure: unknown;
    const fail = (e: unknown) => {
      failure ??= e;
      for (const d of landed.values()) d.reject(failure);
    };
    // A plan cut for overlap submits compute beside its transfers (PeerCopierOptions.besideCompute).
    const flow = this.placed.phases?.phasing === 'sequential' ? 'alone' : 'beside-compute';
    // Without the tiles' phases after them, a transfer's end is only seen when its bytes are there.
    const settle = overlap && !options.communicationOnly ? 'submitted' : 'done';
    // Transfers started, by destination and tensor: one whose bytes overlap an earlier one's (an f16
    // run widened to whole words, aligned-transfers.ts) writes after it, so the later read wins.
    // Only one that lands no later waits: received transfers start with the run, before they are sent.
    const started: { readonly key: string; readonly runs: readonly ByteRun[]; readonly landsBefore: number; readonly settled: Promise<void> }[] = [];
    const start = (group: TransferGroup, move: () => Promise<void>): Promise<void> => {
      const key = `${group.to} ${group.tensor}`;
      const landsBefore = group.routes[0]!.landsBefore;
      const earlier = started.filter((t) => t.key === key && t.landsBefore <= landsBefore && runsOverlap(t.runs, group.runs)).map((t) => t.settled);
      const transfer = (earlier.length === 0 ? move() : Promise.all(earlier).then(move)).then(() => group.routes.forEach((t) => landed.get(t.chunk)!.resolve()), fail);
      started.push({ key, runs: group.runs, landsBefore, settled: transfer });
      transfers.push(transfer);
      return transfer;
    };
    const observe = (group: TransferGroup) =>
      record && ((stages: TransferStages) => group.routes.forEach((t) => record.transfers.push({ ...stages, chunk: t.chunk, name: t.name, from: group.from, to: group.to, bytes: t.bytes, byteRuns: t.runs.length })));
    const link = this.processes?.group;
    const move = (group: TransferGroup) => (): Promise<void> => {
      const { from, to } = group;
      if (this.isLocal(to) && this.isLocal(from)) {
        return this.copier.copyRuns(
          { device: this.devices[from]!, buffer: this.sessions[from]!.tensorBuffer(group.tensor) },
          { device: this.devices[to]!, buffer: this.sessions[to]!.tensorBuffer(group.tensor) },
          group.runs,
          settle,
          observe(group),
          group.label,
          flow,
        );
      }
      const peer = (d: number) => ({ peer: this.processes!.deviceProcess[d]!, peerDevice: this.remoteDevice(d) });
      if (this.isLocal(from)) {
        return sendRuns(this.copier, link!, { device: this.devices[from]!, buffer: this.sessions[from]!.tensorBuffer(group.tensor), ...peer(to) }, group.runs, group.tag!, group.label, flow, observe(group));
      }
      return receiveRuns(this.copier, link!, { device: this.devices[to]!, buffer: this.sessions[to]!.tensorBuffer(group.tensor), ...peer(from) }, group.runs, group.tag!, group.label, settle, flow, observe(group));
    };
    const send = (d: number, moment: number): Promise<void>[] => this.groups[d]![moment]!.map((group) => start(group, move(group)));
    if (link) await link.barrier();
    const startMs = performance.now();
    // What comes from another process is received as soon as the run starts, in the order it lands
    // (two whose bytes overlap land in that order: one that lands later cannot hold back an earlier one).
    this.receives.forEach((g) => start(g, move(g)));
    const loops = this.placed.devices.map(async ({ view }, d) => {
      const session = this.sessions[d];
      if (!session) return;
      const sending = send(d, 0);
      if (!overlap) await Promise.all(sending);
      const running: Promise<RunResult>[] = [];
      for (const [p, phase] of view.phases.entries()) {
        const waitFrom = performance.now();
        await Promise.all(phase.lands.map((c) => landed.get(c)!.promise));
        if (record && phase.lands.length > 0) record.waits.push({ device: d, phase: p, chunks: phase.lands, startMs: waitFrom, endMs: performance.now() });
        if (!(options.communicationOnly && phase.tiles.some((t) => t.count > 0))) {
          const launched = session.launchPhase(p, { timing: record?.gpuTimestamps ?? false });
          running.push(record ? launched.then((result) => (record.dispatches.push({ device: d, phase: p, result }), result)) : launched);
          if (!overlap) await running[running.length - 1];
        }
        // Let the other devices submit their phases before this one starts its transfers: starting one
        // takes the JS thread for a while (encoding, the read-back's submit and map), and the devices'
        // compute should not wait on it (device 1's first phase went 0.2–0.5 ms after device 0's).
        if (phase.sends.length > 0) await Promise.resolve();
        const sent = send(d, p + 1);
        if (!overlap) await Promise.all(sent);
      }
      await Promise.all(running);
    });
    // Every wait inside is bounded; this bounds the whole, should a transfer never start.
    let timer: ReturnType<typeof setTimeout> | undefined;
    const limit = new Promise<void>((_, reject) => (timer = setTimeout(() => reject(new GpuTimeoutError('a run over several devices', 4 * this.timeoutMs)), 4 * this.timeoutMs)));
    try {
      await Promise.race([Promise.all(loops.map((l) => l.catch(fail))), limit]);
      // No transfer outlives the run, failed or not: a host copy on another thread must not be left
      // writing into a mapped range that the caller's clean-up (closing a device) takes away.
      await Promise.race([Promise.all(transfers), limit]);
    } finally {
      clearTimeout(timer);
    }
    if (failure !== undefined) throw failure;
    const wallMs = performance.now() - startMs;
    for (const s of this.sessions) await s?.checkKernelErrors();
    return { wallMs, timing: 'wall-clock' };
  }

  /** A tensor per rank, each rank's copy from the device it ran on. Under an MPI job, `readRanks`. */
  async read(name: string): Promise<Float32Array[]> {
    const ranks = await this.readRanks(name);
    if (ranks.size < this.placed.rankDevice.length) {
      throw new UsageError(`read(${name}): ranks ${this.placed.rankDevice.flatMap((_, r) => (ranks.has(r) ? [] : [r])).join(', ')} run in other processes; readRanks gives this process's`);
    }
    return this.placed.rankDevice.map((_, r) => ranks.get(r)!);
  }

  /** The ranks this process runs, each rank's copy of the tensor from its device. */
  async readRanks(name: string): Promise<Map<number, Float32Array>> {
    const perDevice = await Promise.all(this.sessions.map((s) => s?.read(name)));
    return new Map(this.placed.rankDevice.flatMap((d, r) => (perDevice[d] ? [[r, perDevice[d][r]!] as const] : [])));
  }

  destroy(): void {
    this.sessions.forEach((s) => s?.destroy());
    if (this.ownsCopier) this.copier.destroy();
  }
}

/** What every process of a job must place alike: the module, the placement, the kernels and how transfers are cut into messages. */
function placedPlanText(module: Module, placed: PlacedKernels, processes: ProcessPlacement, copier: PeerCopier): string {
  const pieces = [1, 1 << 30].map((bytes) => copier.piecesOf([{ from: 0, to: 0, bytes }]).size);
  return [printModule(module), JSON.stringify([placed.rankDevice, processes.deviceProcess, copier.flows, pieces]), ...placed.devices.map((d) => d.kernel.wgsl)].join('\n');
}

/**
 * Tags for the transfers between processes: the session's range, then each transfer's messages one
 * after another, in the order every process lists them.
 */
function withTags(groups: TransferGroup[][][], processes: ProcessPlacement, copier: PeerCopier): TransferGroup[][][] {
  const first = nextSessionTag(processes.group);
  let next = 0;
  const crosses = (g: TransferGroup) => processes.deviceProcess[g.from] !== processes.deviceProcess[g.to];
  const tagged = groups.map((moments) =>
    moments.map((list) =>
      list.map((g) => {
        if (!crosses(g)) return g;
        const tag = first + next;
        next += messageCount(copier, g.runs);
        return { ...g, tag };
      }),
    ),
  );
  if (next >= 1 << SESSION_TAG_BITS) throw new UsageError(`a run sends ${next} messages between processes; at most ${(1 << SESSION_TAG_BITS) - 1} fit a session's tags (give larger peer-copy pieces)`);
  return tagged;
}
