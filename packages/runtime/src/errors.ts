/**
 * Every error the runtime throws on purpose is a `RuntimeError`, so a caller can tell "the GPU said no"
 * from a bug with one `instanceof`. Each class carries the facts a caller needs as fields, and puts them
 * in its message too, so a log line alone is enough to act on.
 */
export class RuntimeError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** No WebGPU adapter: no GPU driver, or (in Node) no Vulkan driver that Dawn accepts. */
export class NoAdapterError extends RuntimeError {
  constructor(detail: string) {
    super(
      `no WebGPU adapter: ${detail}. ` +
        'In Node, Dawn needs a Vulkan driver; with no GPU, Mesa >= 24 lavapipe gives a software one ' +
        '(on Debian: `bash scripts/setup-webgpu.sh` installs it). In a browser, enable WebGPU.',
    );
  }
}

export interface ShaderMessage {
  /** 1-based; 0 when the compiler gave no position. */
  readonly line: number;
  /** 1-based; 0 when the compiler gave no position. */
  readonly column: number;
  readonly message: string;
  readonly type: GPUCompilationMessageType;
  /** The WGSL text of `line` ('' when there is none). */
  readonly source: string;
}

/** The WGSL of a kernel did not compile; `messages` are the compiler's, with the offending lines. */
export class ShaderCompileError extends RuntimeError {
  readonly kernel: string;
  readonly messages: readonly ShaderMessage[];

  constructor(kernel: string, messages: readonly ShaderMessage[]) {
    const errors = messages.filter((m) => m.type === 'error');
    const shown = errors.length > 0 ? errors : messages;
    super(
      `kernel "${kernel}" does not compile (${errors.length} error${errors.length === 1 ? '' : 's'}):\n` +
        shown.map(formatShaderMessage).join('\n'),
    );
    this.kernel = kernel;
    this.messages = messages;
  }
}

function formatShaderMessage(m: ShaderMessage): string {
  const head = `  ${m.line}:${m.column}: ${m.type}: ${m.message}`;
  if (m.source === '') return head;
  const caret = ' '.repeat(Math.max(0, m.column - 1)) + '^';
  return `${head}\n    ${m.source}\n    ${caret}`;
}

/** The device could not give memory for `what`. */
export class OutOfMemoryError extends RuntimeError {
  readonly what: string;
  readonly bytes: number;

  constructor(what: string, bytes: number, gpuMessage: string) {
    super(`out of GPU memory allocating ${what} (${bytes} bytes): ${gpuMessage}`);
    this.what = what;
    this.bytes = bytes;
  }
}

/** A request is larger than a device limit; thrown before the GPU is asked. */
export class LimitExceededError extends RuntimeError {
  readonly what: string;
  readonly limit: string;
  readonly requested: number;
  readonly max: number;

  constructor(what: string, limit: string, requested: number, max: number) {
    super(`${what} needs ${requested}, more than this device's ${limit} (${max})`);
    this.what = what;
    this.limit = limit;
    this.requested = requested;
    this.max = max;
  }
}

/** The device was lost (destroyed, driver reset, ...) while the runtime waited on it. */
export class DeviceLostError extends RuntimeError {
  readonly reason: GPUDeviceLostReason;
  readonly gpuMessage: string;

  constructor(what: string, reason: GPUDeviceLostReason, gpuMessage: string) {
    super(`device lost (${reason}) while waiting for ${what}: ${gpuMessage}`);
    this.reason = reason;
    this.gpuMessage = gpuMessage;
  }
}

/** A GPU promise did not settle in time. */
export class GpuTimeoutError extends RuntimeError {
  readonly what: string;
  readonly ms: number;

  constructor(what: string, ms: number) {
    super(`timed out after ${ms} ms waiting for ${what}`);
    this.what = what;
    this.ms = ms;
  }
}

/** WebGPU rejected a call as invalid (from a 'validation' error scope or a pipeline error). */
export class ValidationError extends RuntimeError {
  readonly what: string;
  readonly gpuMessage: string;

  constructor(what: string, gpuMessage: string) {
    super(`invalid ${what}: ${gpuMessage.trim()}`);
    this.what = what;
    this.gpuMessage = gpuMessage;
  }
}

/** The caller asked for something the executor does not have (an unknown buffer name, ...). */
export class UsageError extends RuntimeError {}

/**
 * A peer copy between two devices failed (its source or destination was lost, or a wait timed out):
 * which transfer (`transfer`, e.g. the chunk and ranks the caller named), between which devices, and
 * at which piece of how many; `cause` is the DeviceLostError or GpuTimeoutError underneath.
 */
export class PeerCopyError extends RuntimeError {
  readonly transfer: string;
  readonly fromDevice: string;
  readonly toDevice: string;
  readonly piece: number;
  readonly pieces: number;

  constructor(transfer: string, fromDevice: string, toDevice: string, piece: number, pieces: number, cause: unknown) {
    const why = cause instanceof Error ? cause.message : String(cause);
    super(`peer copy ${transfer} from ${fromDevice} to ${toDevice} failed at piece ${piece + 1} of ${pieces}: ${why}`, { cause });
    this.transfer = transfer;
    this.fromDevice = fromDevice;
    this.toDevice = toDevice;
    this.piece = piece;
    this.pieces = pieces;
  }
}
