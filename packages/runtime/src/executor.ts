import { bindGroupLayoutEntries } from './bindings.js';
import {
  LimitExceededError,
  OutOfMemoryError,
  RuntimeError,
  ShaderCompileError,
  UsageError,
  ValidationError,
  type ShaderMessage,
} from './errors.js';
import type { DeviceHandle } from './gpu.js';
import { inErrorScope } from './scope.js';
import { GpuClock, passDurationsMs, PassTimer, type PassSpan } from './timestamps.js';
import { withTimeout } from './timeout.js';

export interface BufferSpec {
  readonly name: string;
  readonly bytes: number;
  readonly usage: 'storage' | 'uniform';
  /** Uploaded after allocation; at most `bytes` long. */
  readonly init?: ArrayBufferView;
  /** Keep a mappable staging buffer beside it, so repeated `read`s allocate nothing. */
  readonly readback?: boolean;
}

export type Workgroups = readonly [number, number?, number?];

export interface KernelSpec {
  readonly name: string;
  readonly wgsl: string;
  readonly entryPoint: string;
  /** Bind group 0: which allocated buffer each binding sees. */
  readonly bindings: readonly { readonly binding: number; readonly buffer: string }[];
  readonly workgroups: Workgroups;
}

/** A compiled kernel whose buffers are not bound yet (`Executor.bind`). */
export interface KernelPipeline {
  readonly spec: KernelSpec;
  readonly pipeline: GPUComputePipeline;
  readonly bindGroupLayout: GPUBindGroupLayout;
  /** Compiler messages that were not errors. */
  readonly warnings: readonly ShaderMessage[];
}

export interface CompiledKernel extends KernelPipeline {
  readonly bindGroup: GPUBindGroup;
}

export interface Launch {
  readonly kernel: CompiledKernel;
  /** Overrides the kernel's own workgroup count. */
  readonly workgroups?: Workgroups;
  /** Buffers zeroed on the GPU just before this launch (e.g. a control buffer of counters and flags). */
  readonly clear?: readonly string[];
}

export interface RunOptions {
  /** Default: the executor's timeout. */
  readonly timeoutMs?: number;
  /** Time each launch with timestamp queries when the device has them; default true. */
  readonly timing?: boolean;
}

export interface RunResult {
  /** GPU time of each launch, in launch order; only with timestamp queries. */
  readonly gpuMs?: number[];
  /** Host time from submit until the queue reported the work done. */
  readonly wallMs: number;
  /** Host times (`performance.now()`) of the submit and of the queue reporting it done. */
  readonly submittedAtMs?: number;
  readonly doneAtMs?: number;
  /** With timestamp queries: where each launch ran, on the device's own timeline (one origin per executor). */
  readonly gpuSpans?: PassSpan[];
  readonly timing: 'timestamp-query' | 'wall-clock';
}

export interface ExecutorOptions {
  /** Longest wait on any GPU promise; default 30 s. */
  readonly timeoutMs?: number;
}

interface Allocation {
  readonly spec: BufferSpec;
  readonly buffer: GPUBuffer;
  /** False for a buffer the caller made (`adopt`): never destroyed here. */
  readonly owned: boolean;
  staging?: GPUBuffer;
}

/**
 * Runs WGSL compute kernels on one device over named buffers. It knows buffers, kernels and launches,
 * nothing of what they compute. Every wait on the GPU is bounded (see `withTimeout`).
 */
export class Executor {
  private readonly allocations = new Map<string, Allocation>();
  /** One origin for the timestamps of every run, so that runs line up (timestamps.ts). */
  private readonly clock = new GpuClock();

  private constructor(
    private readonly handle: DeviceHandle,
    private readonly timeoutMs: number,
  ) {}

  static create(device: DeviceHandle, options: ExecutorOptions = {}): Executor {
    return new Executor(device, options.timeoutMs ?? 30_000);
  }

  private get device(): GPUDevice {
    return this.handle.device;
  }

  /**
   * Creates the buffers (sizes rounded up to 4 bytes) and uploads their `init`. Sizes are checked
   * against the device's limits before the GPU is asked. All or nothing: if one fails, the buffers
   * this call made are destroyed.
   */
  async allocate(specs: readonly BufferSpec[]): Promise<void> {
    for (const spec of specs) this.checkBufferSpec(spec, specs);
    const made: Allocation[] = [];
    try {
      for (const spec of specs) {
        const size = roundUp4(spec.bytes);
        const usage =
          (spec.usage === 'uniform' ? GPUBufferUsage.UNIFORM : GPUBufferUsage.STORAGE) |
          GPUBufferUsage.COPY_SRC |
          GPUBufferUsage.COPY_DST;
        const buffer = await this.createBuffer(spec.name, size, usage);
        const allocation: Allocation = { spec, buffer, owned: true };
        made.push(allocation);
        if (spec.readback) {
          allocation.staging = await this.createBuffer(
            `${spec.name} (readback)`,
            size,
            GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST,
          );
        }
      }
    } catch (error) {
      for (const { buffer, staging } of made) {
        buffer.destroy();
        staging?.destroy();
      }
      throw error;
    }
    for (const allocation of made) {
      this.allocations.set(allocation.spec.name, allocation);
      if (allocation.spec.init) this.write(allocation.spec.name, allocation.spec.init);
    }
  }

  private checkBufferSpec(spec: BufferSpec, batch: readonly BufferSpec[]): void {
    const { name, bytes, usage } = spec;
    if (this.allocations.has(name) || batch.filter((s) => s.name === name).length > 1) {
      throw new UsageError(`buffer "${name}" is allocated twice`);
    }
    if (!Number.isSafeInteger(bytes) || bytes <= 0) {
      throw new UsageError(`buffer "${name}": bytes must be a positive integer, got ${bytes}`);
    }
    const limits = this.handle.limits;
    const size = roundUp4(bytes);
    const what = `buffer "${name}"`;
    if (size > limits.maxBufferSize) throw new LimitExceededError(what, 'maxBufferSize', size, limits.maxBufferSize);
    // The executor binds whole buffers, so a buffer must fit one binding.
    const [limit, max] =
      usage === 'uniform'
        ? ['maxUniformBufferBindingSize', limits.maxUniformBufferBindingSize]
        : ['maxStorageBufferBindingSize', limits.maxStorageBufferBindingSize];
    if (size > max) throw new LimitExceededError(what, limit, size, max);
    if (spec.init && spec.init.byteLength > bytes) {
      throw new UsageError(`${what}: init has ${spec.init.byteLength} bytes, more than its ${bytes}`);
    }
  }

  private async createBuffer(label: string, size: number, usage: GPUBufferUsageFlags): Promise<GPUBuffer> {
    const what = `buffer "${label}"`;
    // Both scopes are pushed and popped around the one synchronous call (the outer body returns no
    // promise), so a launch or read on the device meanwhile cannot land in them (inErrorScope).
    const { created } = await inErrorScope(
      this.device,
      'out-of-memory',
      this.timeoutMs,
      (e) => new OutOfMemoryError(what, size, e.message),
      () => {
        const created = inErrorScope(
          this.device,
          'validation',
          this.timeoutMs,
          (e) => new ValidationError(what, e.message),
          () => this.device.createBuffer({ label, size, usage }),
        );
        created.catch(() => undefined); // awaited below, once the out-of-memory scope has none to report
        return { created };
      },
    );
    return created;
  }

  /** Uploads `data` to the start of the buffer (through `queue.writeBuffer`). */
  write(name: string, data: ArrayBufferView): void {
    const { spec, buffer } = this.allocation(name);
    if (data.byteLength > spec.bytes) {
      throw new UsageError(`write to "${name}": ${data.byteLength} bytes, more than its ${spec.bytes}`);
    }
    let bytes = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
    // writeBuffer moves whole 4-byte words.
    if (bytes.byteLength % 4 !== 0) {
      const padded = new Uint8Array(roundUp4(bytes.byteLength));
      padded.set(bytes);
      bytes = padded;
    }
    this.device.queue.writeBuffer(buffer, 0, bytes);
  }

  /** The GPU buffer behind a name, for callers that encode their own copies. */
  buffer(name: string): GPUBuffer {
    return this.allocation(name).buffer;
  }

  /**
   * Compiles a kernel and binds its buffers (which must be allocated). WGSL errors become a
   * ShaderCompileError with line, column and source line; an invalid layout or pipeline a
   * ValidationError.
   */
  async compile(kernel: KernelSpec): Promise<CompiledKernel> {
    // Every buffer named must be allocated before the GPU is asked for anything.
    for (const { binding, buffer } of kernel.bindings) this.allocation(buffer, `kernel "${kernel.name}" binding ${binding}`);
    const pipeline = await this.compilePipeline(kernel, (name) => this.allocation(name).spec.usage);
    return this.bind(pipeline, (name) => this.allocation(name).buffer);
  }

  /**
   * Compiles a kernel whose buffers are chosen later (`bind`): `usage` says how each binding's buffer
   * is bound. Errors as `compile`'s.
   */
  async compilePipeline(kernel: KernelSpec, usage: (buffer: string) => BufferSpec['usage']): Promise<KernelPipeline> {
    for (const { binding } of kernel.bindings) {
      if (kernel.bindings.filter((b) => b.binding === binding).length > 1) {
        throw new UsageError(`kernel "${kernel.name}": binding ${binding} is given twice`);
      }
    }
    const module = await this.compileModule(kernel);
    const warnings = (await this.compilationMessages(kernel, module)).filter((m) => m.type !== 'error');

    const what = `pipeline of kernel "${kernel.name}"`;
    return inErrorScope(
      this.device,
      'validation',
      this.timeoutMs,
      (e) => new ValidationError(what, e.message),
      async () => {
        const bindGroupLayout = this.device.createBindGroupLayout({
          label: kernel.name,
          entries: bindGroupLayoutEntries(
            kernel.wgsl,
            kernel.bindings.map(({ binding, buffer }) => ({ binding, usage: usage(buffer) })),
          ),
        });
        const layout = this.device.createPipelineLayout({ label: kernel.name, bindGroupLayouts: [bindGroupLayout] });
        const pipeline = await withTimeout(
          this.device.createComputePipelineAsync({
            label: kernel.name,
            layout,
            compute: { module, entryPoint: kernel.entryPoint },
          }),
          this.timeoutMs,
          `createComputePipelineAsync for kernel "${kernel.name}"`,
          this.device,
        ).catch((error: unknown) => {
          if (error instanceof RuntimeError) throw error;
          throw new ValidationError(what, error instanceof Error ? error.message : String(error));
        });
        return { spec: kernel, pipeline, bindGroupLayout, warnings };
      },
    );
  }

  /** A compiled pipeline with the buffer `buffers(name)` at each binding: a kernel ready to launch. */
  bind(pipeline: KernelPipeline, buffers: (name: string) => GPUBuffer): CompiledKernel {
    const { spec, bindGroupLayout } = pipeline;
    const bindGroup = this.device.createBindGroup({
      label: spec.name,
      layout: bindGroupLayout,
      entries: spec.bindings.map(({ binding, buffer }) => ({ binding, resource: { buffer: buffers(buffer) } })),
    });
    return { ...pipeline, bindGroup };
  }

  /** Creates the shader module inside a validation scope: Dawn otherwise logs WGSL errors to stderr. */
  private async compileModule(kernel: KernelSpec): Promise<GPUShaderModule> {
    let module: GPUShaderModule | undefined;
    try {
      return await inErrorScope(
        this.device,
        'validation',
        this.timeoutMs,
        (e) => new ValidationError(`WGSL of kernel "${kernel.name}"`, e.message),
        () => (module = this.device.createShaderModule({ label: kernel.name, code: kernel.wgsl })),
      );
    } catch (error) {
      // The compilation info says where the WGSL is wrong; the scope's message only says that it is.
      if (module !== undefined && error instanceof ValidationError) await this.compilationMessages(kernel, module);
      throw error;
    }
  }

  /** The compiler's messages; throws ShaderCompileError when one is an error. */
  private async compilationMessages(kernel: KernelSpec, module: GPUShaderModule): Promise<ShaderMessage[]> {
    const info = await withTimeout(
      module.getCompilationInfo(),
      this.timeoutMs,
      `getCompilationInfo for kernel "${kernel.name}"`,
      this.device,
    );
    const lines = kernel.wgsl.split('\n');
    const messages = info.messages.map((m) => ({
      line: m.lineNum,
      column: m.linePos,
      message: m.message,
      type: m.type,
      source: m.lineNum > 0 ? (lines[m.lineNum - 1] ?? '') : '',
    }));
    if (messages.some((m) => m.type === 'error')) throw new ShaderCompileError(kernel.name, messages);
    return messages;
  }

  /**
   * Runs the launches in order: one command encoder, one compute pass per launch, one submit, then
   * waits for the queue. With timestamp queries each pass is timed on the GPU; `wallMs` is always there.
   * A timeout stops the wait, not the GPU: a kernel that never ends keeps the device busy.
   */
  async run(launches: readonly Launch[], options: RunOptions = {}): Promise<RunResult> {
    if (launches.length === 0) throw new UsageError('run: no launches');
    const timeoutMs = options.timeoutMs ?? this.timeoutMs;
    const counts = launches.map((l) => this.workgroupCounts(l));
    const timer = (options.timing ?? true) && this.handle.hasTimestamps ? PassTimer.create(this.device, launches.length) : undefined;
    const names = launches.map((l) => l.kernel.spec.name).join(', ');
    try {
      // The scope covers the encoding and the submit alone (validation happens there), so it is popped
      // before another launch on this device can push its own (inErrorScope).
      const { submittedAtMs, done } = await inErrorScope(
        this.device,
        'validation',
        timeoutMs,
        (e) => new ValidationError(`launch of ${names}`, e.message),
        () => {
          const encoder = this.device.createCommandEncoder({ label: names });
          launches.forEach(({ kernel, clear }, i) => {
            for (const name of clear ?? []) encoder.clearBuffer(this.buffer(name));
            const pass = encoder.beginComputePass({
              label: kernel.spec.name,
              ...(timer && { timestampWrites: timer.writesFor(i) }),
            });
            pass.setPipeline(kernel.pipeline);
            pass.setBindGroup(0, kernel.bindGroup);
            pass.dispatchWorkgroups(...counts[i]!);
            pass.end();
          });
          timer?.resolve(encoder);
          const submitted = performance.now();
          this.device.queue.submit([encoder.finish()]);
          // Asked for now, so that the wait for the scope's pop adds nothing to the measured time.
          const work = withTimeout(this.device.queue.onSubmittedWorkDone(), timeoutMs, `kernels ${names}`, this.device).then(() => performance.now());
          work.catch(() => undefined); // awaited below, once the scope is popped
          return { submittedAtMs: submitted, done: work };
        },
      );
      const doneAtMs = await done;
      const host = { wallMs: doneAtMs - submittedAtMs, submittedAtMs, doneAtMs };
      if (timer === undefined) return { ...host, timing: 'wall-clock' };
      const ticks = await timer.readTicks(timeoutMs);
      return { gpuMs: passDurationsMs(ticks), gpuSpans: this.clock.spans(ticks), ...host, timing: 'timestamp-query' };
    } finally {
      timer?.destroy();
    }
  }

  private workgroupCounts({ kernel, workgroups }: Launch): [number, number, number] {
    const [x, y = 1, z = 1] = workgroups ?? kernel.spec.workgroups;
    const max = this.handle.limits.maxComputeWorkgroupsPerDimension;
    for (const n of [x, y, z]) {
      if (!Number.isInteger(n) || n < 0) {
        throw new UsageError(`kernel "${kernel.spec.name}": workgroup count ${n} is not a count`);
      }
      if (n > max) {
        throw new LimitExceededError(`kernel "${kernel.spec.name}"`, 'maxComputeWorkgroupsPerDimension', n, max);
      }
    }
    return [x, y, z];
  }

  /** Copies the buffer into a mappable one and returns its first `bytes` bytes. */
  async read(name: string): Promise<ArrayBuffer> {
    const allocation = this.allocation(name);
    const { spec, buffer } = allocation;
    // A kept staging buffer that is mapped or being mapped (another read in flight) cannot be reused.
    const kept = allocation.staging?.mapState === 'unmapped' ? allocation.staging : undefined;
    const staging =
      kept ??
      (await this.createBuffer(`${name} (readback)`, buffer.size, GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST));
    let ok = false;
    try {
      const encoder = this.device.createCommandEncoder({ label: `read ${name}` });
      encoder.copyBufferToBuffer(buffer, 0, staging, 0, buffer.size);
      this.device.queue.submit([encoder.finish()]);
      await withTimeout(staging.mapAsync(GPUMapMode.READ), this.timeoutMs, `read of buffer "${name}"`, this.device);
      const data = staging.getMappedRange(0, buffer.size).slice(0, spec.bytes);
      staging.unmap();
      ok = true;
      return data;
    } finally {
      // A staging buffer whose map failed or is still pending is of no further use.
      if (kept === undefined || !ok) staging.destroy();
      if (kept !== undefined && !ok) delete allocation.staging;
    }
  }

  /**
   * Names a buffer the caller made, to be bound, read and written like an allocation and never
   * destroyed here. It must be a storage buffer that copies may read and write.
   */
  adopt(name: string, buffer: GPUBuffer): void {
    if (this.allocations.has(name)) throw new UsageError(`adopt: a buffer named "${name}" is already there`);
    const needed = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
    if ((buffer.usage & needed) !== needed) {
      throw new UsageError(`adopt "${name}" (${buffer.label || 'unlabelled'}): its usage must include STORAGE | COPY_SRC | COPY_DST (has ${buffer.usage})`);
    }
    this.allocations.set(name, { spec: { name, bytes: buffer.size, usage: 'storage' }, buffer, owned: false });
  }

  /** Destroys one buffer this executor made, or forgets one it adopted. */
  release(name: string): void {
    const { buffer, staging, owned } = this.allocation(name);
    if (owned) buffer.destroy();
    staging?.destroy();
    this.allocations.delete(name);
  }

  /** Destroys every buffer this executor made (and forgets those it adopted). */
  destroy(): void {
    for (const name of [...this.allocations.keys()]) this.release(name);
  }

  private allocation(name: string, usedBy?: string): Allocation {
    const allocation = this.allocations.get(name);
    if (allocation !== undefined) return allocation;
    const known = [...this.allocations.keys()];
    throw new UsageError(
      `${usedBy ? `${usedBy}: ` : ''}no buffer named "${name}" (allocated: ${known.length > 0 ? known.join(', ') : 'none'})`,
    );
  }
}

function roundUp4(bytes: number): number {
  return Math.ceil(bytes / 4) * 4;
}
