/**
 * Loading native/mpi/mpi_transport.c (built by native/build-mpi.mjs where `mpicc` is on PATH). Only a
 * process started by an MPI launcher loads it: loading it links libmpi into the process.
 */

/** A range for the addon: a byte view, or [head, tail], the first and last views of one mapped range. */
export type AddonRange = Uint8Array | readonly [Uint8Array, Uint8Array];

export interface MpiInfo {
  readonly rank: number;
  readonly size: number;
  readonly host: string;
  /** The largest tag MPI takes (MPI_TAG_UB). */
  readonly tagUpperBound: number;
  /** MPI_Get_library_version's first line. */
  readonly version: string;
}

/**
 * native/mpi/mpi_transport.c. Each call checks its arguments and throws (TypeError, or RangeError
 * with code ERR_SYNCOPATE_MPI_ARGUMENT) before anything is posted; each promise settles on the JS
 * thread once MPI is done with its range. `id`s name operations for cancel().
 */
export interface MpiAddon {
  /** 2: this source; others are refused by the loader. */
  readonly apiVersion: number;
  /** Starts the progress thread and MPI (MPI_Init_thread) and waits for it; later calls return the same. */
  init(): MpiInfo;
  /**
   * With `singleCopy` (both sides must agree, per peer), MPI carries a descriptor and an ack and the
   * receiver reads the sender's range with process_vm_readv; the send settles on the ack.
   */
  send(range: AddonRange, bytes: number, peer: number, tag: number, id: number, singleCopy?: boolean): Promise<void>;
  receive(range: AddonRange, bytes: number, peer: number, tag: number, id: number, singleCopy?: boolean): Promise<void>;
  allGather(data: Uint8Array, id: number): Promise<Uint8Array[]>;
  barrier(id: number): Promise<void>;
  /** MPI_Cancel of a send or receive: its promise rejects (code ERR_SYNCOPATE_MPI_CANCELLED) once cancelled, or settles as it completes. */
  cancel(id: number): void;
  /** MPI_Abort(MPI_COMM_WORLD, code): every process of the job ends. */
  abort(code: number): never;
  /** Cancels what is in flight, rejects what is queued, then MPI_Finalize; the thread ends. */
  finalize(): Promise<void>;
  /** This process's pid, a token's address and the token, for a peer's cmaCheck; lets any process of the user read this one (PR_SET_PTRACER). */
  cmaToken(): Uint8Array;
  /** '' when process_vm_readv read the token `token` names from its process, else why not. */
  cmaCheck(token: Uint8Array): string;
  /** The single-copy path's copy threads (1 to 64), started with the first copy. */
  setCopyThreads(threads: number): void;
}

/** The codes the addon's rejections carry. */
export const ADDON_CODES = {
  argument: 'ERR_SYNCOPATE_MPI_ARGUMENT',
  cancelled: 'ERR_SYNCOPATE_MPI_CANCELLED',
  closed: 'ERR_SYNCOPATE_MPI_CLOSED',
  size: 'ERR_SYNCOPATE_MPI_SIZE',
  mpi: 'ERR_SYNCOPATE_MPI',
  /** A single-copy send its receiver refused (another size). */
  refused: 'ERR_SYNCOPATE_MPI_REFUSED',
  /** A single copy whose process_vm_readv failed or stopped short. */
  copy: 'ERR_SYNCOPATE_MPI_COPY',
} as const;

const ADDON_API_VERSION = 2;

/** Where the addon may be: the env override alone, else beside a bundle, then the package's build (from dist/ or src/mpi/). */
function addonCandidates(moduleUrl: string): string[] {
  const override = process.env.SYNCOPATE_MPI_ADDON;
  if (override) return [override];
  return ['./mpi_transport.node', '../native/mpi/build/Release/mpi_transport.node', '../../native/mpi/build/Release/mpi_transport.node'].map((p) =>
    decodeURIComponent(new URL(p, moduleUrl).pathname),
  );
}

/**
 * The addon, or why not. RTLD_NOW: a libmpi without a symbol the addon needs (another MPI's) fails
 * here, not mid-run. libmpi is made global by the addon itself before MPI starts (Open MPI's plugins
 * may need its symbols).
 */
/**
 * A Node built-in without a static import, so that a browser bundle of the runtime never asks for
 * it (the MPI transport runs only in Node >= 20.16).
 */
export function nodeBuiltin<T>(id: string): T {
  return (process as unknown as { getBuiltinModule(id: string): T }).getBuiltinModule(id);
}

export function loadMpiAddon(): { addon?: MpiAddon; why?: string } {
  if (typeof process === 'undefined' || typeof process.dlopen !== 'function') return { why: 'not Node.js' };
  const errors: string[] = [];
  for (const path of addonCandidates(import.meta.url)) {
    const module = { exports: {} as Partial<MpiAddon> };
    try {
      process.dlopen(module, path, nodeBuiltin<typeof import('node:os')>('node:os').constants.dlopen.RTLD_NOW);
    } catch (e) {
      errors.push(`${path}: ${(e as Error).message.split('\n')[0]}`);
      continue;
    }
    if (module.exports.apiVersion !== ADDON_API_VERSION || typeof module.exports.init !== 'function') {
      errors.push(`${path}: not API version ${ADDON_API_VERSION} (an addon built from older source)`);
      continue;
    }
    return { addon: module.exports as MpiAddon };
  }
  return { why: errors.join('; ') };
}
