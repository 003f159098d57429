/**
 * `syncopate run` and `bench` refuse shapes the adapter cannot hold before it builds inputs for them: the fused
 * kernel binds every rank's copy of a tensor that shares a device as one storage buffer, so that
 * buffer must fit the adapter's `maxBufferSize` and `maxStorageBufferBindingSize`. Without the check
 * a huge shape first fills host memory with inputs and then fails deep in the runtime.
 */
import { dtypeBytes } from '@syncopate/ir';
import { openGpu, withTimeout } from '@syncopate/runtime';
import { getWorkload, UsageError } from '../../workloads/index.js';
import { type RunOptions } from '../run-report.js';

export interface BufferLimits {
  readonly maxBufferSize: number;
  readonly maxStorageBufferBindingSize: number;
}

/** The first adapter's buffer limits; undefined when there is no adapter (the run then says so itself). */
export async function adapterBufferLimits(timeoutMs = 30_000): Promise<BufferLimits | undefined> {
  try {
    const gpu = await openGpu();
    const adapter = await withTimeout(gpu.gpu.requestAdapter(), timeoutMs, 'requestAdapter');
    if (adapter === null) return undefined;
    return { maxBufferSize: adapter.limits.maxBufferSize, maxStorageBufferBindingSize: adapter.limits.maxStorageBufferBindingSize };
  } catch {
    return undefined;
  }
}

const MIB = 2 ** 20;
const size = (bytes: number) => (bytes >= 10 * MIB ? `${Math.round(bytes / MIB)} MiB` : `${bytes} bytes`);

/**
 * Throws `UsageError` when one of the workload's tensors (as its kernel declares them), times the
 * ranks that share a device, is larger than a storage buffer may be. Building the kernel is cheap
 * (IR only) and gives every workload's own tensors, shapes and dtypes.
 */
export function checkRunFits(o: RunOptions, limits: BufferLimits): void {
  const { m, n, k } = o.shape;
  const devices = o.devices ?? 1;
  const ranksOnDevice = o.ranksPerDevice ?? Math.ceil(o.ranks / devices);
  const max = Math.min(limits.maxBufferSize, limits.maxStorageBufferBindingSize);
  const limit = limits.maxStorageBufferBindingSize <= limits.maxBufferSize ? 'maxStorageBufferBindingSize' : 'maxBufferSize';
  const { kernel } = getWorkload(o.workload).build({
    ranks: o.ranks,
    shape: o.shape,
    dtype: o.dtype,
    ...(o.chunksPerRank === undefined ? {} : { chunksPerRank: o.chunksPerRank }),
    ...(o.block === undefined ? {} : { block: o.block }),
  });
  for (const t of kernel.tensors) {
    const bytes = t.shape.reduce((a, b) => a * b, 1) * dtypeBytes(t.dtype);
    const buffer = Math.ceil((bytes * ranksOnDevice) / 4) * 4;
    if (buffer > max) {
      const ranks = ranksOnDevice === 1 ? 'one rank' : `the ${ranksOnDevice} ranks on a device`;
      throw new UsageError(
        `${o.workload} ${m}x${n}x${k}: ${t.name} [${t.shape.join(', ')}] for ${ranks} needs a buffer of ${size(buffer)}, more than the adapter's ${limit} of ${size(max)}`,
      );
    }
  }
}
