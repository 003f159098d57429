/** One fused kernel on one device: lower a compiled kernel to WGSL, open a device, run it once over your data. */
import * as E from 'fp-ts/lib/Either.js';
import { emitFusedKernel, type CodegenOptions, type FusedKernel } from '@syncopate/backends';
import { openGpu, requestDevice, type DeviceHandle, type OpenGpuOptions } from '@syncopate/runtime';
import type { CompiledKernel } from './compile.js';
import { CompileError } from './compile-error.js';
import type { TensorData } from './row-major.js';
import { FusedSession, type FusedRun } from './session.js';

/** Lowers a compiled kernel to WGSL; throws `CompileError` with what the backend cannot lower. */
export function lowerToWgsl(compiled: CompiledKernel, options: CodegenOptions = {}): FusedKernel {
  const fused = emitFusedKernel(compiled.module, options);
  if (E.isLeft(fused)) throw new CompileError(fused.left);
  return fused.right;
}

export function emitWgsl(compiled: CompiledKernel, options: CodegenOptions = {}): string {
  return lowerToWgsl(compiled, options).wgsl;
}

/** Runs a fused kernel once over `inputs` (every tensor, per rank) and reads back the tensors in `read`. */
export async function runFused(
  device: DeviceHandle,
  fused: FusedKernel,
  inputs: TensorData,
  read: readonly string[],
  options: { timeoutMs?: number } = {},
): Promise<FusedRun> {
  const session = await FusedSession.open(device, fused, inputs, { ...options, read });
  try {
    const run = await session.run();
    const tensors: TensorData = {};
    for (const name of read) tensors[name] = await session.read(name);
    return { tensors, run };
  } finally {
    session.destroy();
  }
}

/** Opens the first adapter and a device with what the runs need. */
export async function openDevice(gpu: OpenGpuOptions = {}): Promise<DeviceHandle> {
  return requestDevice(await openGpu(gpu), { requiredLimits: 'adapter-max' });
}
