import { RuntimeError } from './errors.js';
import { withTimeout } from './timeout.js';

const isPromiseLike = (x: unknown): x is PromiseLike<unknown> => typeof (x as { then?: unknown } | null)?.then === 'function';

/**
 * Runs `body` inside a WebGPU error scope and pops it whatever happens, so the device's scope stack
 * stays balanced. An error the scope caught becomes `toError(gpuError)`; an error `body` threw wins
 * over it, since it happened first.
 *
 * Scopes are one stack per device, popped from the top: a scope left open across an await catches the
 * errors of whatever else pushes and runs meanwhile, and its pop takes that other scope instead. So a
 * synchronous `body` (encoding and submitting a launch) has its scope popped before anything else can
 * run; an asynchronous one keeps it open until it settles and must not overlap other scoped work on
 * the device.
 */
export async function inErrorScope<T>(
  device: GPUDevice,
  filter: GPUErrorFilter,
  timeoutMs: number,
  toError: (gpuError: GPUError) => RuntimeError,
  body: () => T | Promise<T>,
): Promise<T> {
  device.pushErrorScope(filter);
  let popped: Promise<GPUError | null> | undefined;
  const pop = () => (popped ??= withTimeout(device.popErrorScope(), timeoutMs, `popErrorScope('${filter}')`, device));
  let result: T;
  try {
    const value = body();
    if (!isPromiseLike(value)) void pop().catch(() => null);
    result = await value;
  } catch (thrown) {
    await pop().catch(() => null);
    throw thrown;
  }
  const gpuError = await pop();
  if (gpuError !== null) throw toError(gpuError);
  return result;
}
