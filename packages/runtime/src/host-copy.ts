/**
 * The host copy of a peer copy: a mapped read-back range into a mapped upload range. On the JS thread
 * (`Uint8Array.set`) it is the transfer's bound (benchmarks/peer-copy.md: 6-11 GB/s, one thread, and
 * nothing else runs meanwhile). The native addon (native/host_copy.c, built by `native/build.mjs`
 * where a C compiler and Node's headers are at hand) runs it in slices on libuv's thread pool instead.
 * Without the addon (a browser, no compiler) the JS copy is used.
 */
import { UsageError } from './errors.js';
import { ANCHOR_BYTES, labelOf, mappedAnchors, mappedBytes } from './mapped-range.js';

/** How a buffer of a host copy is named in errors: `copyMapped: dst (label)`. */
const who = (name: string, buffer: GPUBuffer) => `copyMapped: ${name} (${labelOf(buffer)})`;

export interface HostCopier {
  /** 'native': slices on libuv's thread pool; 'js': `Uint8Array.set` on the calling thread. */
  readonly kind: 'native' | 'js';
  /** How a native copy writes its destination (HostCopierOptions.stores). */
  readonly stores?: HostCopyStores;
  /** Copies `src` into `dst` (equal lengths); both must stay valid (mapped) until it resolves. */
  copy(dst: Uint8Array, src: Uint8Array): Promise<void>;
  /**
   * Copies the first `bytes` of mapped `src` into mapped `dst` (both mapped from offset 0 over at
   * least `bytes`, and kept so until it resolves); refuses, with a UsageError, a buffer that is not
   * mapped so, or a `bytes` that is not a whole number. Optional: `copyMapped()` falls back to
   * `copy` over the two ranges.
   */
  copyMapped?(dst: GPUBuffer, src: GPUBuffer, bytes: number): Promise<void>;
}

/** 'cached': memcpy; 'streaming': non-temporal stores to the destination (x86-64; memcpy elsewhere). */
export type HostCopyStores = 'cached' | 'streaming';

export interface HostCopierOptions {
  /** Slices a copy is cut into, at most, from 1 to 256 (default: libuv's pool size). */
  readonly threads?: number;
  /**
   * How the native copy writes the destination (default 'streaming'). On two H100s (one host) one
   * thread moved 7.8 GB/s between mapped ranges of 64 MiB with streaming stores against 5.6 with
   * memcpy, and the suite's transfers of 2 x 32 MiB took 2.76-2.86 ms against 3.28-3.72
   * (benchmarks/peer-copy.md).
   */
  readonly stores?: HostCopyStores;
}

/** A range for the addon: a byte view, or [head, tail], the first and last views of one mapped range. */
type AddonRange = Uint8Array | readonly [Uint8Array, Uint8Array];

/**
 * native/host_copy.c. Each entry checks [offset, offset + length) against both ranges and throws
 * (TypeError, or RangeError with code ERR_SYNCOPATE_HOST_COPY_RANGE) before it copies a byte.
 */
interface Addon {
  /** 2: ranges checked; older builds are refused by the loader. */
  readonly apiVersion: number;
  /** On the pool in `slices` parts (1 to 256); the promise settles once all are done. */
  copy(dst: AddonRange, src: AddonRange, offset: number, length: number, streaming?: boolean, slices?: number): Promise<void>;
  /** The same bytes copied on the calling thread, before it returns. */
  copySync(dst: AddonRange, src: AddonRange, offset: number, length: number, streaming?: boolean): void;
}

const ADDON_API_VERSION = 2;

/**
 * The first `bytes` of mapped `src` into mapped `dst`, by `copier.copyMapped` where it has one, else
 * by `copy` over the two ranges. Refuses (UsageError) what is not mapped over `bytes`.
 */
export function copyMapped(copier: HostCopier, dst: GPUBuffer, src: GPUBuffer, bytes: number): Promise<void> {
  if (copier.copyMapped) return copier.copyMapped(dst, src, bytes);
  return settled(() => {
    checkMapped(dst, src, bytes);
    return copier.copy(mappedBytes(dst, who('dst', dst), bytes), mappedBytes(src, who('src', src), bytes));
  });
}

/** `run`'s promise, or a rejected one with what it threw. */
function settled(run: () => Promise<void>): Promise<void> {
  try {
    return run();
  } catch (e) {
    return Promise.reject(e);
  }
}


/** Throws a UsageError unless both buffers are mapped and `bytes` is a whole number that fits each. */
function checkMapped(dst: GPUBuffer, src: GPUBuffer, bytes: number): void {
  if (!(Number.isSafeInteger(bytes) && bytes >= 0)) throw new UsageError(`copyMapped: bytes must be a whole number from 0 to 2^53 - 1, got ${bytes}`);
  for (const [name, b] of [['dst', dst], ['src', src]] as const) {
    if (b.mapState !== 'mapped') throw new UsageError(`copyMapped: ${name} (${labelOf(b)}) is ${b.mapState}, not mapped`);
    if (bytes > b.size) throw new UsageError(`copyMapped: ${bytes} bytes do not fit ${name} (${labelOf(b)}) of ${b.size}`);
  }
}

/** Below this a copy goes through one view of each range: too small for two anchors. */
const MIN_ANCHORED_BYTES = 2 * ANCHOR_BYTES;
/** A slice shorter than this costs more in hand-offs than its thread gains. */
const MIN_SLICE_BYTES = 256 << 10;
/**
 * Below this a copy stays on the JS thread: a hand-off to the pool and back costs more than copying
 * there (gemv-ar's small chunks moved 0.84x as fast through the pool on two H200s:
 * benchmarks/peer-copy.md).
 */
const MIN_NATIVE_BYTES = 512 << 10;
const MAX_SLICES = 256;

export const jsHostCopy: HostCopier = {
  kind: 'js',
  copy(dst, src) {
    if (dst.length !== src.length) return Promise.reject(new UsageError(`host copy: dst has ${dst.length} bytes, src ${src.length}; they must be equal`));
    dst.set(src);
    return Promise.resolve();
  },
};

/** The addon's own refusals (a bug here if they happen: every call is checked first) as UsageErrors. */
function addonCall(run: () => Promise<void> | void): Promise<void> {
  try {
    return Promise.resolve(run()).catch((e: Error) => Promise.reject(new UsageError(e.message, { cause: e })));
  } catch (e) {
    return Promise.reject(new UsageError((e as Error).message, { cause: e }));
  }
}

function nativeHostCopy(addon: Addon, threads: number, stores: HostCopyStores): HostCopier {
  const streaming = stores === 'streaming';
  /** Slices a copy of `bytes` is cut into (the addon cuts them on 64-byte lines and settles once). */
  const slices = (bytes: number) => Math.max(1, Math.min(threads, Math.floor(bytes / MIN_SLICE_BYTES)));
  return {
    kind: 'native',
    stores,
    copy(dst, src) {
      if (dst.length < MIN_NATIVE_BYTES || dst.length !== src.length) return jsHostCopy.copy(dst, src);
      return addonCall(() => addon.copy(dst, src, 0, dst.length, streaming, slices(dst.length)));
    },
    copyMapped(dst, src, bytes) {
      return settled(() => {
        checkMapped(dst, src, bytes);
        if (bytes < MIN_ANCHORED_BYTES) return jsHostCopy.copy(mappedBytes(dst, who('dst', dst), bytes), mappedBytes(src, who('src', src), bytes));
        const to = mappedAnchors(dst, who('dst', dst), bytes);
        const from = mappedAnchors(src, who('src', src), bytes);
        if (bytes >= MIN_NATIVE_BYTES) return addonCall(() => addon.copy(to, from, 0, bytes, streaming, slices(bytes)));
        // On this thread, but through the anchors: no ArrayBuffer over the whole ranges (see ANCHOR_BYTES).
        return addonCall(() => addon.copySync(to, from, 0, bytes, streaming));
      });
    },
  };
}

/** Where the addon may be: the env override alone, else beside a bundle, then the package's build. */
function addonCandidates(moduleUrl: string): string[] {
  const override = process.env.SYNCOPATE_HOST_COPY_ADDON;
  if (override) return [override];
  return ['./host_copy.node', '../native/build/Release/host_copy.node'].map((p) => decodeURIComponent(new URL(p, moduleUrl).pathname));
}

let addon: { addon?: Addon; why?: string } | undefined;

/**
 * The host copier this process uses: the native one where its addon loads, else the JS one (`why`
 * says what was missing), with `options` (HostCopierOptions). Set
 * `SYNCOPATE_HOST_COPY=js` to keep copies on the JS thread, and `SYNCOPATE_HOST_COPY_ADDON` to a path
 * to load the addon from elsewhere. The pool's size is libuv's (`UV_THREADPOOL_SIZE`, default 4): on
 * two H200s the suite's transfers were faster with 4 than with 16 (benchmarks/peer-copy.md).
 */
export function hostCopier(options: HostCopierOptions = {}): { readonly copier: HostCopier; readonly why?: string } {
  const threads = options.threads ?? (Number(process.env.UV_THREADPOOL_SIZE) || 4);
  if (!(Number.isInteger(threads) && threads >= 1 && threads <= MAX_SLICES)) throw new UsageError(`hostCopier: threads must be an integer from 1 to ${MAX_SLICES}, got ${threads}`);
  const stores = options.stores ?? 'streaming';
  if (stores !== 'cached' && stores !== 'streaming') throw new UsageError(`hostCopier: stores must be 'cached' or 'streaming', got ${String(stores)}`);
  addon ??= loadAddon();
  if (!addon.addon) return { copier: jsHostCopy, why: addon.why! };
  return { copier: nativeHostCopy(addon.addon, threads, stores) };
}

function loadAddon(): { addon?: Addon; why?: string } {
  if (typeof process === 'undefined' || typeof process.dlopen !== 'function') return { why: 'not Node.js' };
  if (process.env.SYNCOPATE_HOST_COPY === 'js') return { why: 'SYNCOPATE_HOST_COPY=js' };
  const errors: string[] = [];
  for (const path of addonCandidates(import.meta.url)) {
    const module = { exports: {} as Partial<Addon> };
    try {
      process.dlopen(module, path);
    } catch (e) {
      errors.push(`${path}: ${(e as Error).message.split('\n')[0]}`);
      continue;
    }
    if (module.exports.apiVersion !== ADDON_API_VERSION || typeof module.exports.copy !== 'function' || typeof module.exports.copySync !== 'function') {
      errors.push(`${path}: not API version ${ADDON_API_VERSION} (an addon built from older source: rebuild with node native/build.mjs)`);
      continue;
    }
    return { addon: module.exports as Addon };
  }
  return { why: `addon not loaded (${errors.join('; ')})` };
}
