import { DeviceLostError, GpuTimeoutError } from './errors.js';

/**
 * The waits pending on each device, told when it is lost. One `lost.then` per device, not per wait:
 * `lost` never settles while the device lives, so a handler per wait would keep every wait's closure
 * (and what its promise resolved to) alive for as long as the device.
 */
const pendingWaits = new WeakMap<GPUDevice, Set<(info: GPUDeviceLostInfo) => void>>();

function onLost(device: GPUDevice, reject: (info: GPUDeviceLostInfo) => void): () => void {
  let waits = pendingWaits.get(device);
  if (waits === undefined) {
    const set = new Set<(info: GPUDeviceLostInfo) => void>();
    pendingWaits.set(device, (waits = set));
    void device.lost.then((info) => set.forEach((r) => r(info)));
  }
  waits.add(reject);
  return () => waits.delete(reject);
}

/**
 * Awaits a GPU promise, but never forever: it loses the race to a timer (→ GpuTimeoutError) and, when a
 * device is given, to `device.lost` (→ DeviceLostError). A kernel that hangs, or a driver that drops a
 * callback, becomes an error naming `what` instead of a process that never ends.
 *
 * The timer is cleared however the race ends, so a settled wait leaves nothing that keeps Node alive.
 * It is not `unref`ed: while the GPU is still working, the timer is what keeps the event loop turning.
 */
export async function withTimeout<T>(promise: Promise<T>, ms: number, what: string, device?: GPUDevice): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let forget: (() => void) | undefined;
  const failure = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new GpuTimeoutError(what, ms)), ms);
    if (device !== undefined) forget = onLost(device, (info) => reject(new DeviceLostError(what, info.reason, info.message)));
  });
  try {
    return await Promise.race([promise, failure]);
  } finally {
    clearTimeout(timer);
    forget?.();
  }
}
