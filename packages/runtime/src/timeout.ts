import { DeviceLostError, GpuTimeoutError } from './errors.js';

/**
 * Awaits a GPU promise, but never forever: it loses the race to a timer (→ GpuTimeoutError) and, when a
 * device is given, to `device.lost` (→ DeviceLostError). A kernel that hangs, or a driver that drops a
 * callback, becomes an error naming `what` instead of a process that never ends.
 *
 * The timer is cleared however the race ends, so a settled wait leaves nothing that keeps Node alive.
 * It is not `unref`ed: while the GPU is still working, the timer is what keeps the event loop turning.
 */
export async function withTimeout<T>(
  promise: Promise<T>,
  ms: number,
  what: string,
  device?: GPUDevice,
): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new GpuTimeoutError(what, ms)), ms);
  });
  const racers: Promise<T>[] = [promise, timeout];
  if (device !== undefined) {
    racers.push(
      device.lost.then((info) => {
        throw new DeviceLostError(what, info.reason, info.message);
      }),
    );
  }
  try {
    return await Promise.race(racers);
  } finally {
    clearTimeout(timer);
  }
}
