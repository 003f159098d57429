import { openDevices, type OpenDevicesOptions, type PlacedDeviceHandle } from '@syncopate/runtime';
import { devicesOverProcesses, type RankProcesses } from './processes.js';

/** How many devices a run's ranks are placed on: `devices`, else one a handle, else one (run, bench and the tuner ask alike). */
export const devicesOf = (o: { readonly devices?: number; readonly handles?: readonly unknown[] }): number => o.devices ?? o.handles?.length ?? 1;

/**
 * Opens the `count` devices of a run (with the adapter's largest limits): all of them, or under an
 * MPI job this process's block (`deviceProcess`, by default devicesOverProcesses) on its block of its
 * host's GPUs, undefined at the other processes' indices.
 */
export async function openRunDevices(count: number, group?: RankProcesses, open: OpenDevicesOptions = {}, deviceProcess?: readonly number[]): Promise<(PlacedDeviceHandle | undefined)[]> {
  const job = group && group.size > 1 ? group : undefined;
  const owner = job && (deviceProcess ?? devicesOverProcesses(count, job.size));
  const ours = Array.from({ length: count }, (_, d) => d).filter((d) => !owner || owner[d] === job!.rank);
  const opened = await openDevices(ours.length, { ...open, device: { requiredLimits: 'adapter-max', ...open.device }, ...(job && { gpuOffset: job.localRank * ours.length }) });
  const devices: (PlacedDeviceHandle | undefined)[] = Array(count).fill(undefined);
  ours.forEach((d, i) => (devices[d] = opened[i]));
  return devices;
}
