import { RuntimeError } from './errors.js';
import { withTimeout } from './timeout.js';

/**
 * Runs `body` inside a WebGPU error scope and pops it whatever happens, so the device's scope stack
 * stays balanced. An error the scope caught becomes `toError(gpuError)`; an error `body` threw wins
 * over it, since it happened first.
 */
export async function inErrorScope<T>(
  device: GPUDevice,
  filter: GPUErrorFilter,
  timeoutMs: number,
  toError: (gpuError: GPUError) => RuntimeError,
  body: () => T | Promise<T>,
): Promise<T> {
  device.pushErrorScope(filter);
  let result: T;
  try {
    result = await body();
  } catch (thrown) {
    await withTimeout(device.popErrorScope(), timeoutMs, `popErrorScope('${filter}')`, device).catch(() => null);
    throw thrown;
  }
  const gpuError = await withTimeout(device.popErrorScope(), timeoutMs, `popErrorScope('${filter}')`, device);
  if (gpuError !== null) throw toError(gpuError);
  return result;
}
