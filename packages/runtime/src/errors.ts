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

/**
 * This process was started by an MPI launcher but cannot join its job (the transport addon is missing
 * or older than this source, or MPI did not start), or its group was closed under an operation:
 * `detail` says which, and the message what to do.
 */
export class ProcessGroupError extends RuntimeError {
  readonly detail: string;

  constructor(detail: string, options?: { cause?: unknown }) {
    super(`process group: ${detail}`, options);
    this.detail = detail;
  }
}

/** One operation of a process group, as the errors below name it. */
export interface ProcessOperation {
  readonly kind: 'send' | 'receive' | 'allGather' | 'barrier';
  /** The caller's name for it (e.g. the chunk and ranks), or the collective's name. */
  readonly label: string;
  /** The other process, for a send or receive; undefined for a collective (every process). */
  readonly peer?: number;
  readonly peerHost?: string;
  /** This process, and its host. */
  readonly process: number;
  readonly host: string;
}

/** `"label" from process 0 (host b)`, `"label" to ...`, or `"barrier" from every process`. */
function operationText(op: ProcessOperation): string {
  if (op.peer === undefined) return `"${op.label}" from every process`;
  return `"${op.label}" ${op.kind === 'send' ? 'to' : 'from'} process ${op.peer} (host ${op.peerHost})`;
}

/** Fields every process-operation error carries. */
abstract class ProcessOperationError extends RuntimeError {
  readonly kind: ProcessOperation['kind'];
  readonly label: string;
  readonly peer: number | undefined;
  readonly peerHost: string | undefined;
  readonly process: number;
  readonly host: string;

  constructor(op: ProcessOperation, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.kind = op.kind;
    this.label = op.label;
    this.peer = op.peer;
    this.peerHost = op.peerHost;
    this.process = op.process;
    this.host = op.host;
  }
}

/**
 * An operation between processes did not finish within `ms`: a receive whose message never came
 * (cancelled before this was thrown), a send no one received, or a collective some process never
 * joined.
 */
export class ProcessTimeoutError extends ProcessOperationError {
  readonly ms: number;

  constructor(op: ProcessOperation, ms: number) {
    const what = `${op.kind === 'send' ? 'to send' : 'for'} ${operationText(op)}`;
    super(op, `process ${op.process} (host ${op.host}) waited ${ms} ms ${what}`);
    this.ms = ms;
  }
}

/**
 * The job is ending under an operation in flight: the launcher sent SIGTERM (another process ended
 * or was killed). Written to stderr, one line per operation, as the process exits.
 */
export class ProcessLostError extends ProcessOperationError {
  constructor(op: ProcessOperation) {
    super(op, `process ${op.process} (host ${op.host}) lost ${operationText(op)}: the job is ending (SIGTERM from the launcher: another process ended or was killed)`);
  }
}

/**
 * MPI failed an operation (`mpiMessage` is its error string), or a receive got a message of another
 * size than it expected (`received` bytes): the two processes disagree about the plan.
 */
export class ProcessTransferError extends ProcessOperationError {
  readonly mpiMessage: string;
  readonly received: number | undefined;

  constructor(op: ProcessOperation, mpiMessage: string, received?: number) {
    super(op, `process ${op.process} (host ${op.host}): ${op.kind} ${operationText(op)} failed: ${mpiMessage}`);
    this.mpiMessage = mpiMessage;
    this.received = received;
  }
}
