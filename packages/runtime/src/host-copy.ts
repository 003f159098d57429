/**
 * The host copy of a peer copy: a mapped read-back range into a mapped upload range. On the JS thread
 * (`Uint8Array.set`) it is the transfer's bound (benchmarks/peer-copy.md: 6-11 GB/s, one thread, and
 * nothing else runs meanwhile). The native addon (native/host_copy.c, built by `native/build.mjs`
 * where a C compiler and Node's headers are at hand) runs it in slices on libuv's thread pool instead.
 * Without the addon (a browser, no compiler) the JS copy is used.
 */
import { UsageError } from './errors.js';

export interface HostCopier {
  /** 'native': slices on libuv's thread pool; 'js': `Uint8Array.set` on the calling thread. */
  readonly kind: 'native' | 'js';
  /** How a native copy writes its destination (HostCopierOptions.stores). */
  readonly stores?: HostCopyStores;
  /** Copies `src` into `dst` (equal lengths); both must stay valid (mapped) until it resolves. */
  copy(dst: Uint8Array, src: Uint8Array): Promise<void>;
  /**
   * Copies the first `bytes` of mapped `src` into mapped `dst` (both mapped from offset 0, at least
   * `bytes` long, and kept so until it resolves). Optional: `copyMapped()` falls back to `copy` over
   * the two whole ranges.
   */
  copyMapped?(dst: GPUBuffer, src: GPUBuffer, bytes: number): Promise<void>;
}

/** 'cached': memcpy; 'streaming': non-temporal stores to the destination (x86-64; memcpy elsewhere). */
export type HostCopyStores = 'cached' | 'streaming';

export interface HostCopierOptions {
  /** Slices a copy is cut into, at most (default: libuv's pool size). */
  readonly threads?: number;
  /**
   * How the native copy writes the destination (default 'streaming'). On two H100s (one host) one
   * thread moved 7.8 GB/s between mapped ranges of 64 MiB with streaming stores against 5.6 with
   * memcpy, and the suite's transfers of 2 x 32 MiB took 2.76-2.86 ms against 3.28-3.72
   * (benchmarks/peer-copy.md, call 1 of results/2gpu-2026-11-26h).
   */
  readonly stores?: HostCopyStores;
}

interface Addon {
  copy(dst: Uint8Array, src: Uint8Array): Promise<void>;
  /**
   * Bytes [offset, offset + length) after each view's start: the views may be anchors of longer
   * mapped ranges; `streaming` writes the destination with non-temporal stores; `slices` parts run on
   * the pool at once, the promise settled once all are done.
   */
  copy(dst: Uint8Array, src: Uint8Array, offset: number, length: number, streaming?: boolean, slices?: number): Promise<void>;
  /** The same bytes copied on the calling thread, before it returns. */
  copySync(dst: Uint8Array, src: Uint8Array, offset: number, length: number, streaming?: boolean): void;
}

/**
 * The first `bytes` of mapped `src` into mapped `dst`, by `copier.copyMapped` where it has one, else
 * by `copy` over the two ranges.
 */
export function copyMapped(copier: HostCopier, dst: GPUBuffer, src: GPUBuffer, bytes: number): Promise<void> {
  // The native copy reads and writes past what it is handed: check what it may reach first.
  for (const [name, b] of [['dst', dst], ['src', src]] as const) {
    if (b.mapState !== 'mapped') return Promise.reject(new UsageError(`copyMapped: ${name} (${b.label || 'unlabelled'}) is ${b.mapState}, not mapped`));
    if (!(Number.isInteger(bytes) && bytes >= 0 && bytes <= b.size)) return Promise.reject(new UsageError(`copyMapped: ${bytes} bytes do not fit ${name} (${b.label || 'unlabelled'}) of ${b.size}`));
  }
  return copier.copyMapped ? copier.copyMapped(dst, src, bytes) : copyWholeRanges(copier, dst, src, bytes);
}

/** The first `bytes` of both mapped buffers handed to JS as ranges, copied by `copier.copy`. */
function copyWholeRanges(copier: HostCopier, dst: GPUBuffer, src: GPUBuffer, bytes: number): Promise<void> {
  return copier.copy(new Uint8Array(dst.getMappedRange(0, bytes)), new Uint8Array(src.getMappedRange(0, bytes)));
}

/**
 * The smallest range getMappedRange gives (offsets are multiples of 8): the anchor the addon copies
 * from. An ArrayBuffer over a mapped range counts as V8 external memory until it is unmapped, and with
 * 64 MiB or more held at once (two transfers' pieces of 4 MiB, read-back and upload) V8 ran major
 * collections mid-run, up to 14 ms with the JS thread stopped (two H200s; on lavapipe 3 in 20 rounds of 64
 * MiB held, 10 of 96 MiB: benchmarks/peer-copy.md); an anchor counts 8 bytes.
 */
const ANCHOR_BYTES = 8;

/** A slice shorter than this costs more in hand-offs than its thread gains. */
const MIN_SLICE_BYTES = 256 << 10;
/**
 * Below this a copy stays on the JS thread: a hand-off to the pool and back costs more than copying
 * there (gemv-ar's small chunks moved 0.84x as fast through the pool on two H200s, call 4 of
 * benchmarks/results/h200x2-2026-11-26b).
 */
const MIN_NATIVE_BYTES = 512 << 10;

export const jsHostCopy: HostCopier = {
  kind: 'js',
  copy(dst, src) {
    if (dst.length !== src.length) return Promise.reject(new UsageError(`host copy: dst has ${dst.length} bytes, src ${src.length}; they must be equal`));
    dst.set(src);
    return Promise.resolve();
  },
};

function nativeHostCopy(addon: Addon, threads: number, stores: HostCopyStores): HostCopier {
  const streaming = stores === 'streaming';
  /** Slices a copy of `bytes` is cut into (the addon cuts them on 64-byte lines and settles once). */
  const slices = (bytes: number) => Math.max(1, Math.min(threads, Math.floor(bytes / MIN_SLICE_BYTES)));
  return {
    kind: 'native',
    stores,
    copy(dst, src) {
      if (dst.length < MIN_NATIVE_BYTES || dst.length !== src.length) return jsHostCopy.copy(dst, src);
      return addon.copy(dst, src, 0, dst.length, streaming, slices(dst.length));
    },
    copyMapped(dst, src, bytes) {
      if (bytes < ANCHOR_BYTES) return copyWholeRanges(jsHostCopy, dst, src, bytes);
      const to = new Uint8Array(dst.getMappedRange(0, ANCHOR_BYTES));
      const from = new Uint8Array(src.getMappedRange(0, ANCHOR_BYTES));
      if (bytes >= MIN_NATIVE_BYTES) return addon.copy(to, from, 0, bytes, streaming, slices(bytes));
      // On this thread, but through the anchors: no ArrayBuffer over the whole ranges (see ANCHOR_BYTES).
      addon.copySync(to, from, 0, bytes, streaming);
      return Promise.resolve();
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
  addon ??= loadAddon();
  if (!addon.addon) return { copier: jsHostCopy, why: addon.why! };
  const threads = options.threads ?? (Number(process.env.UV_THREADPOOL_SIZE) || 4);
  if (!(Number.isInteger(threads) && threads >= 1)) throw new UsageError(`hostCopier: threads must be a positive integer, got ${threads}`);
  const stores = options.stores ?? 'streaming';
  if (stores !== 'cached' && stores !== 'streaming') throw new UsageError(`hostCopier: stores must be 'cached' or 'streaming', got ${String(stores)}`);
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
    if (typeof module.exports.copy !== 'function' || typeof module.exports.copySync !== 'function') {
      errors.push(`${path}: no copy() or copySync() (an addon built from older source)`);
      continue;
    }
    return { addon: module.exports as Addon };
  }
  return { why: `addon not loaded (${errors.join('; ')})` };
}
