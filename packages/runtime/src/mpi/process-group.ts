/**
 * Ranks as processes: `mpirun -n P node app.mjs` starts P processes, each running some ranks of one
 * plan, and chunks between them travel by MPI point-to-point from and into mapped staging ranges
 * (native/mpi/mpi_transport.c). The addon's own thread owns MPI; here every operation gets a timeout,
 * and a receive that times out is cancelled (and awaited) before its promise rejects, so nothing is
 * written into a range after the caller may have unmapped it. Between two processes on one host the
 * bytes take one copy (sameHostCopy 'cma'): the receiver's copy threads read the sender's mapped
 * range with process_vm_readv, MPI carrying only a descriptor and an ack; join probes that every
 * such pair can, and every process takes MPI's own path if any cannot.
 */
import {
  ProcessGroupError,
  ProcessLostError,
  ProcessTimeoutError,
  ProcessTransferError,
  UsageError,
  type ProcessOperation,
} from '../errors.js';
import { ADDON_CODES, loadMpiAddon, nodeBuiltin, type MpiAddon, type MpiInfo } from './addon.js';

const writeSync = (fd: number, text: string) => nodeBuiltin<typeof import('node:fs')>('node:fs').writeSync(fd, text);
import { transportRange } from './ranges.js';

/** The processes of an MPI job, this one among them. */
export interface ProcessGroup {
  /** This process, 0..size-1. */
  readonly rank: number;
  readonly size: number;
  /** This process's host name. */
  readonly host: string;
  /** The host of every process (gathered at join). */
  readonly hosts: readonly string[];
  /** Index among the processes on this host (by rank order). */
  readonly localRank: number;
  readonly localSize: number;
  /** The MPI library, e.g. "Open MPI v4.1.4, ...". */
  readonly library: string;
  /**
   * How a send or receive between two processes on one host moves its bytes, the same in every
   * process: 'cma', one copy by the receiver's copy threads straight out of the sender's mapped range
   * (process_vm_readv), MPI carrying a descriptor and an ack; 'mpi', MPI's own path (Open MPI's
   * shared memory, two copies on one thread). Between hosts it is always MPI's.
   */
  readonly sameHostCopy: 'cma' | 'mpi';
  /** Why, in one line: "process_vm_readv, 4 copy threads", or what made it 'mpi'. */
  readonly sameHostCopyReason: string;
  /**
   * Sends the first `bytes` of mapped GPUBuffer `from` (or a Uint8Array) to process `to` as message
   * `tag`; resolves once the range may be unmapped. A GPUBuffer must be mapped from offset 0 with no
   * range taken from it yet. Rejects with ProcessTimeoutError after timeoutMs (the send cancelled
   * first; where MPI cannot cancel it, the job is aborted rather than left reading the range). On the
   * single-copy path it resolves once the receiver has read the range, and rejects with
   * ProcessTransferError if the receiver expected another size or could not read it.
   */
  send(from: GPUBuffer | Uint8Array, bytes: number, to: number, tag: number, label: string): Promise<void>;
  /**
   * Receives message `tag` from process `from` into the first `bytes` of mapped `into`; resolves once
   * the bytes are there. Rejects with ProcessTimeoutError after timeoutMs (the receive cancelled
   * first), ProcessTransferError if the message has another size.
   */
  receive(into: GPUBuffer | Uint8Array, bytes: number, from: number, tag: number, label: string): Promise<void>;
  /** Every process's `data` (any length each), in rank order. */
  allGather(data: Uint8Array): Promise<Uint8Array[]>;
  barrier(): Promise<void>;
  /** Ends every process of the job (MPI_Abort) after writing `message` to stderr. */
  abort(code: number, message?: string): never;
  /** Cancels what is in flight (its promises reject with ProcessGroupError), then MPI_Finalize. */
  close(): Promise<void>;
}

export interface JoinOptions {
  /** Per operation (and for close()), default 30_000. */
  readonly timeoutMs?: number;
}

const DEFAULT_TIMEOUT_MS = 30_000;
/**
 * How long a timed-out send or receive may take to be cancelled before the job is aborted. A receive
 * MPI has matched finishes (its bytes are arriving); one it cannot cancel within this may still write
 * into the range, and MPI_Abort is then the only way to be sure it will not.
 */
const CANCEL_BOUND_MS = 5_000;
/** 128 + SIGTERM, as a shell reports a process SIGTERM ended. */
const SIGTERM_EXIT_CODE = 143;

/** The most copy threads the addon takes. */
const MAX_COPY_THREADS = 64;

/**
 * The single-copy path's threads: SYNCOPATE_MPI_COPY_THREADS, else 8. A 64 MiB message between two
 * processes on an H100 host (16 cores) moved 15.5-18.5 GB/s with 4 threads and 25.5-30.0 with 8
 * (bandwidth.mjs; benchmarks/results/mpi-transport-2026-11-28).
 */
function copyThreads(env: Readonly<Record<string, string | undefined>> = process.env): number {
  const text = env.SYNCOPATE_MPI_COPY_THREADS;
  if (!text) return 8;
  const threads = Number(text);
  if (!(Number.isInteger(threads) && threads >= 1)) throw new UsageError(`SYNCOPATE_MPI_COPY_THREADS=${text}: the MPI transport's copy threads must be a whole number from 1`);
  return Math.min(threads, MAX_COPY_THREADS);
}

/** The variables MPI launchers set in each process they start (Open MPI, PMIx, MPICH's Hydra). */
const LAUNCHER_VARIABLES = ['OMPI_COMM_WORLD_SIZE', 'PMIX_RANK', 'PMI_SIZE'] as const;

/** Whether this process was started by an MPI launcher (env only; loads nothing). */
export function launchedByMpi(env: Readonly<Record<string, string | undefined>> = process.env): boolean {
  return LAUNCHER_VARIABLES.some((name) => env[name] !== undefined);
}

let joined: Promise<ProcessGroup> | undefined;

/**
 * The job this process was started in, or undefined when not started by an MPI launcher. Throws
 * ProcessGroupError (saying what to install or build) when started by one but the addon cannot load
 * or MPI cannot start. Joins once per process: later calls return the same group (and ignore their
 * options).
 */
export async function joinProcessGroup(options: JoinOptions = {}): Promise<ProcessGroup | undefined> {
  if (!launchedByMpi()) return undefined;
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  if (!(Number.isFinite(timeoutMs) && timeoutMs > 0)) throw new UsageError(`joinProcessGroup: timeoutMs must be a positive number, got ${timeoutMs}`);
  joined ??= MpiProcessGroup.join(timeoutMs);
  return joined;
}

function launcherText(): string {
  const name = LAUNCHER_VARIABLES.find((n) => process.env[n] !== undefined)!;
  return `${name}=${process.env[name]}`;
}

type Outcome<T> = { readonly value: T } | { readonly error: unknown } | 'timeout';

/** `promise`'s outcome, or 'timeout' after `ms`; never rejects. */
function within<T>(promise: Promise<T>, ms: number): Promise<Outcome<T>> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve('timeout'), ms);
    promise.then(
      (value) => (clearTimeout(timer), resolve({ value })),
      (error: unknown) => (clearTimeout(timer), resolve({ error })),
    );
  });
}

const codeOf = (e: unknown) => (e as { code?: unknown } | null)?.code;

/** The addon's refusals (it checks what we checked already, so a bug here if they happen) as UsageErrors. */
function usage(e: unknown): UsageError {
  return new UsageError((e as Error).message, { cause: e });
}

/** Where the processes run, gathered once at join. */
interface Layout {
  readonly hosts: readonly string[];
  readonly localRank: number;
  readonly localSize: number;
}

/** The path chosen at join for processes on one host. */
interface SameHostCopy {
  readonly path: 'cma' | 'mpi';
  readonly reason: string;
}

class MpiProcessGroup implements ProcessGroup {
  private layout: Layout;
  private copy: SameHostCopy = { path: 'mpi', reason: 'not probed yet' };
  private nextId = 1;
  private closing = false;
  /** What the addon has in flight, by id: named in ProcessLostError lines if SIGTERM comes. */
  private readonly inFlight = new Map<number, ProcessOperation>();
  private readonly onSigterm = () => this.lost();
  /** mpirun reports a process that ends without MPI_Finalize as "exiting improperly": say why here. */
  private readonly onExit = () => {
    if (!this.closing) writeSync(2, `process ${this.rank} (host ${this.host}) exited without closing its process group: call close() before exiting\n`);
  };

  private constructor(
    private readonly addon: MpiAddon,
    private readonly info: MpiInfo,
    private readonly timeoutMs: number,
  ) {
    this.layout = { hosts: [], localRank: 0, localSize: 1 };
  }

  static async join(timeoutMs: number): Promise<ProcessGroup> {
    const loaded = loadMpiAddon();
    if (!loaded.addon) {
      throw new ProcessGroupError(
        `this process was started by an MPI launcher (${launcherText()}) but the MPI transport addon did not load (${loaded.why}). ` +
          'Build it where mpicc is on PATH: `node native/build-mpi.mjs` in packages/runtime (Open MPI 4: apt-get install libopenmpi-dev openmpi-bin), ' +
          'or set SYNCOPATE_MPI_ADDON to its path',
      );
    }
    let info: MpiInfo;
    try {
      info = loaded.addon.init();
    } catch (e) {
      throw new ProcessGroupError(`MPI did not start (${(e as Error).message}); run under mpirun from the same MPI the addon was built against`, { cause: e });
    }
    const group = new MpiProcessGroup(loaded.addon, info, timeoutMs);
    process.on('SIGTERM', group.onSigterm);
    process.on('exit', group.onExit);
    const encoder = new TextEncoder();
    const decoder = new TextDecoder();
    const hosts = (await group.allGather(encoder.encode(info.host))).map((b) => decoder.decode(b));
    const local = hosts.flatMap((h, rank) => (h === info.host ? [rank] : []));
    group.layout = { hosts, localRank: local.indexOf(info.rank), localSize: local.length };
    group.copy = await group.probeSameHostCopy();
    return group;
  }

  /**
   * Whether every two processes on one host can read each other's memory with process_vm_readv:
   * each lets the others ptrace it (Yama's ptrace_scope 1 forbids a non-descendant otherwise), the
   * pids, token addresses and tokens are gathered, each process reads every same-host peer's token,
   * and the outcomes are gathered so that every process takes the same path. Every process runs the
   * same collectives (the hosts are the same everywhere).
   */
  private async probeSameHostCopy(): Promise<SameHostCopy> {
    const { hosts } = this.layout;
    if (new Set(hosts).size === hosts.length) return { path: 'mpi', reason: 'no two processes share a host' };
    const threads = copyThreads();
    let mine = '';
    if (process.env.SYNCOPATE_MPI_SINGLE_COPY === '0') mine = `SYNCOPATE_MPI_SINGLE_COPY=0 in process ${this.rank}`;
    else if (process.platform !== 'linux') mine = `process ${this.rank} does not run on Linux (process_vm_readv)`;
    const tokens = await this.allGather(mine ? new Uint8Array(0) : this.addon.cmaToken());
    for (let peer = 0; peer < this.size && !mine; peer++) {
      // A peer that gave no token says why itself.
      if (peer === this.rank || hosts[peer] !== this.host || tokens[peer]!.length === 0) continue;
      const why = this.addon.cmaCheck(tokens[peer]!);
      if (why) mine = `process ${this.rank} cannot read process ${peer}: ${why}`;
    }
    const decoder = new TextDecoder();
    const outcomes = (await this.allGather(new TextEncoder().encode(mine))).map((b) => decoder.decode(b));
    const failed = outcomes.find((o) => o !== '');
    if (failed !== undefined) return { path: 'mpi', reason: failed };
    this.addon.setCopyThreads(threads);
    return { path: 'cma', reason: `process_vm_readv, ${threads} copy threads` };
  }

  get rank(): number {
    return this.info.rank;
  }

  get size(): number {
    return this.info.size;
  }

  get host(): string {
    return this.info.host;
  }

  get hosts(): readonly string[] {
    return this.layout.hosts;
  }

  get localRank(): number {
    return this.layout.localRank;
  }

  get localSize(): number {
    return this.layout.localSize;
  }

  get library(): string {
    return this.info.version;
  }

  get sameHostCopy(): 'cma' | 'mpi' {
    return this.copy.path;
  }

  get sameHostCopyReason(): string {
    return this.copy.reason;
  }

  send(from: GPUBuffer | Uint8Array, bytes: number, to: number, tag: number, label: string): Promise<void> {
    return this.pointToPoint('send', from, bytes, to, tag, label);
  }

  receive(into: GPUBuffer | Uint8Array, bytes: number, from: number, tag: number, label: string): Promise<void> {
    return this.pointToPoint('receive', into, bytes, from, tag, label);
  }

  allGather(data: Uint8Array): Promise<Uint8Array[]> {
    if (!(data instanceof Uint8Array)) return Promise.reject(new UsageError('allGather: data must be a Uint8Array'));
    return this.track({ kind: 'allGather', label: 'allGather', process: this.rank, host: this.host }, (id) => this.addon.allGather(data, id));
  }

  barrier(): Promise<void> {
    return this.track({ kind: 'barrier', label: 'barrier', process: this.rank, host: this.host }, (id) => this.addon.barrier(id));
  }

  abort(code: number, message?: string): never {
    if (message !== undefined) writeSync(2, message.endsWith('\n') ? message : `${message}\n`);
    return this.addon.abort(code);
  }

  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    process.off('SIGTERM', this.onSigterm);
    process.off('exit', this.onExit);
    const outcome = await within(this.addon.finalize(), this.timeoutMs);
    if (outcome === 'timeout') {
      this.abort(1, `process ${this.rank} (host ${this.host}): close() waited ${this.timeoutMs} ms for MPI_Finalize (another process never closed, or an operation could not be cancelled); aborting the job`);
    }
    if ('error' in outcome) throw new ProcessGroupError(`close() failed: ${(outcome.error as Error).message}`, { cause: outcome.error });
  }

  private pointToPoint(kind: 'send' | 'receive', target: GPUBuffer | Uint8Array, bytes: number, peer: number, tag: number, label: string): Promise<void> {
    try {
      if (!(Number.isInteger(peer) && peer >= 0 && peer < this.size)) throw new UsageError(`${kind} "${label}": process ${peer} is not in this job of ${this.size}`);
      if (!(Number.isInteger(tag) && tag >= 0 && tag <= this.info.tagUpperBound)) {
        throw new UsageError(`${kind} "${label}": tag ${tag} is not an integer from 0 to ${this.info.tagUpperBound} (this MPI's MPI_TAG_UB)`);
      }
      const range = transportRange(target, bytes, `${kind} "${label}"`);
      const op: ProcessOperation = { kind, label, peer, peerHost: this.hosts[peer] ?? '?', process: this.rank, host: this.host };
      const singleCopy = this.copy.path === 'cma' && this.hosts[peer] === this.host;
      return this.track(op, (id) => this.addon[kind](range, bytes, peer, tag, id, singleCopy));
    } catch (e) {
      return Promise.reject(e);
    }
  }

  /**
   * Posts an operation by `post(id)` and follows it: the addon's rejections as typed errors, and
   * after timeoutMs a ProcessTimeoutError, once a send or receive is cancelled (or aborted, if it
   * cannot be). A collective that times out runs on in MPI (it cannot be cancelled; its memory is
   * the addon's own).
   */
  private async track<T>(op: ProcessOperation, post: (id: number) => Promise<T>): Promise<T> {
    if (this.closing) throw new UsageError(`${op.kind} "${op.label}" after close()`);
    const id = this.nextId++;
    let posted: Promise<T>;
    try {
      posted = post(id);
    } catch (e) {
      throw usage(e);
    }
    this.inFlight.set(id, op);
    const forget = () => this.inFlight.delete(id);
    posted.then(forget, forget);
    const outcome = await within(posted, this.timeoutMs);
    if (outcome !== 'timeout') return this.settled(op, outcome);
    const timedOut = new ProcessTimeoutError(op, this.timeoutMs);
    if (op.kind !== 'send' && op.kind !== 'receive') throw timedOut;
    this.addon.cancel(id);
    const after = await within(posted, CANCEL_BOUND_MS);
    if (after === 'timeout') {
      this.abort(1, `${timedOut.name}: ${timedOut.message}; the ${op.kind} could not be cancelled within ${CANCEL_BOUND_MS} ms, so the job ends here (MPI_Abort) rather than leave it touching the range`);
    }
    if ('error' in after && codeOf(after.error) === ADDON_CODES.cancelled) throw timedOut;
    // It completed while being cancelled: the bytes are there.
    return this.settled(op, after);
  }

  private settled<T>(op: ProcessOperation, outcome: { readonly value: T } | { readonly error: unknown }): T {
    if ('value' in outcome) return outcome.value;
    const e = outcome.error as Error & { received?: number };
    switch (codeOf(e)) {
      case ADDON_CODES.closed:
        throw new ProcessGroupError(`${op.kind} "${op.label}" was in flight when the group was closed`, { cause: e });
      case ADDON_CODES.size:
        throw new ProcessTransferError(op, e.message, e.received);
      default:
        throw new ProcessTransferError(op, e.message);
    }
  }

  /** SIGTERM from the launcher: another process ended. One line per operation in flight, then exit. */
  private lost(): void {
    const lines = [...this.inFlight.values()].map((op) => {
      const e = new ProcessLostError(op);
      return `${e.name}: ${e.message}`;
    });
    if (lines.length === 0) lines.push(`process ${this.rank} (host ${this.host}): SIGTERM from the launcher (another process ended or was killed), nothing in flight`);
    writeSync(2, `${lines.join('\n')}\n`);
    process.off('exit', this.onExit);
    process.exit(SIGTERM_EXIT_CODE);
  }
}
