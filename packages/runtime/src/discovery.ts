import { UsageError } from './errors.js';
import { openGpu, requestDevice, type DeviceHandle, type OpenGpuOptions, type RequestDeviceOptions } from './gpu.js';

/** A display-class PCI device (VGA or 3D controller), as sysfs describes it. */
export interface PciGpu {
  /** `DOMAIN:BUS:DEV.FN`, e.g. `0000:00:07.0`. */
  readonly address: string;
  /** The `DRI_PRIME` value that makes Mesa's device-select layer put this GPU first: `pci-0000_00_07_0`. */
  readonly driPrime: string;
  /** PCI vendor id as sysfs writes it, e.g. `0x10de` (NVIDIA); '' where the file is missing. */
  readonly vendor: string;
  /** PCI device id, e.g. `0x2330` (H100 SXM); '' where the file is missing. */
  readonly device: string;
  /** PCI class, e.g. `0x030200` (3D controller) or `0x030000` (VGA). */
  readonly class: string;
}

type Fs = typeof import('node:fs');

/**
 * `node:fs` without a static import, so a browser bundle of the runtime never asks for it.
 * `process.getBuiltinModule` is Node >= 20.16; the CommonJS build also has `require`.
 */
function nodeFs(): Fs | undefined {
  if (typeof process === 'undefined' || typeof process.versions?.node !== 'string') return undefined;
  const get = (process as { getBuiltinModule?: (id: string) => unknown }).getBuiltinModule;
  if (typeof get === 'function') return get.call(process, 'node:fs') as Fs;
  // A specifier in a variable keeps bundlers from following it into a browser build.
  const specifier = 'node:fs';
  if (typeof require === 'function') return require(specifier) as Fs;
  throw new UsageError(`listPciGpus needs Node >= 20.16 (process.getBuiltinModule); this is ${process.version}`);
}

/**
 * Every display-class PCI device (class `0x03....`: `0x0300xx` VGA, `0x0302xx` 3D controller, ...),
 * read from sysfs, sorted by address. No vendor tools are run. A missing `root` (not Linux, or a
 * browser) gives []; entries without a readable `class` file are skipped.
 */
export function listPciGpus(root = '/sys/bus/pci/devices'): PciGpu[] {
  const fs = nodeFs();
  if (fs === undefined) return [];
  let entries: string[];
  try {
    entries = fs.readdirSync(root);
  } catch {
    return [];
  }
  const read = (address: string, file: string): string | undefined => {
    try {
      return fs.readFileSync(`${root}/${address}/${file}`, 'utf8').trim().toLowerCase();
    } catch {
      return undefined;
    }
  };
  const gpus: PciGpu[] = [];
  for (const address of entries.sort()) {
    const cls = read(address, 'class');
    if (cls === undefined || !cls.startsWith('0x03')) continue;
    gpus.push({
      address,
      driPrime: driPrimeOf(address),
      vendor: read(address, 'vendor') ?? '',
      device: read(address, 'device') ?? '',
      class: cls,
    });
  }
  return gpus;
}

/** `0000:00:07.0` → `pci-0000_00_07_0`, the form Mesa's `DRI_PRIME` takes. */
export function driPrimeOf(address: string): string {
  return 'pci-' + address.replace(/[:.]/g, '_');
}

/** Where a device of `openDevices` was opened. */
export type DevicePlacement =
  | {
      readonly kind: 'pci';
      /** Index into the GPU list used (`listPciGpus()` unless `options.gpus` was given). */
      readonly gpuIndex: number;
      readonly gpu: PciGpu;
      /** e.g. `GPU 1 (0000:00:07.0, 0x10de:0x2330)`. */
      readonly description: string;
    }
  | { readonly kind: 'software'; readonly description: string }
  | { readonly kind: 'browser'; readonly description: string };

export interface PlacedDeviceHandle extends DeviceHandle {
  /** Index of this device in the array `openDevices` returned. */
  readonly index: number;
  readonly placement: DevicePlacement;
}

export interface OpenDevicesOptions {
  /** The GPUs to spread devices over; default `listPciGpus(sysfsRoot)`. `[]` forces the software adapter. */
  readonly gpus?: readonly PciGpu[];
  /** Where `listPciGpus` looks; default `/sys/bus/pci/devices`. */
  readonly sysfsRoot?: string;
  /** Passed to `openGpu` for every device. */
  readonly gpu?: OpenGpuOptions;
  /** Passed to `requestDevice` for every device. */
  readonly device?: RequestDeviceOptions;
  /**
   * Device i goes on GPU (gpuOffset + i) mod n (default 0): a process of several on one host takes
   * its own block of the host's GPUs this way.
   */
  readonly gpuOffset?: number;
}

const isNode = typeof process !== 'undefined' && typeof process.versions?.node === 'string';

/**
 * Opens `count` devices. With display-class PCI GPUs, device i goes on GPU (gpuOffset + i) mod n: `DRI_PRIME` is set
 * to that GPU's value around its `openGpu` (which keeps one Dawn instance per `DRI_PRIME`) and its
 * `requestAdapter`, and the caller's value is put back afterwards. Without any (a machine with only
 * Mesa lavapipe), every device comes from the software adapter, one `requestAdapter` each. In a
 * browser there is one adapter: `count` must be 1. Devices are opened one after another; if one
 * fails, those already opened are closed and the error is thrown.
 */
export async function openDevices(count: number, options: OpenDevicesOptions = {}): Promise<PlacedDeviceHandle[]> {
  if (!Number.isInteger(count) || count < 1) {
    throw new RangeError(`openDevices: count must be an integer >= 1, got ${count}`);
  }
  if (!isNode) {
    if (count !== 1) {
      throw new RangeError(`openDevices: a browser has one WebGPU adapter, so count must be 1, got ${count}`);
    }
    const handle = await requestDevice(await openGpu(options.gpu), options.device);
    return [{ ...handle, index: 0, placement: { kind: 'browser', description: 'navigator.gpu' } }];
  }

  const gpus = options.gpus ?? listPciGpus(options.sysfsRoot);
  if (gpus.length === 0 && count > 1) oneThreadPerSoftwareDevice();
  const opened: PlacedDeviceHandle[] = [];
  try {
    for (let i = 0; i < count; i++) {
      if (gpus.length === 0) {
        const handle = await requestDevice(await openGpu(options.gpu), options.device);
        opened.push({ ...handle, index: i, placement: { kind: 'software', description: softwareDescription(handle) } });
        continue;
      }
      const gpuIndex = ((options.gpuOffset ?? 0) + i) % gpus.length;
      const gpu = gpus[gpuIndex]!;
      const handle = await withDriPrime(gpu.driPrime, async () =>
        requestDevice(await openGpu(options.gpu), options.device),
      );
      const description = `GPU ${gpuIndex} (${gpu.address}, ${gpu.vendor}:${gpu.device})`;
      opened.push({ ...handle, index: i, placement: { kind: 'pci', gpuIndex, gpu, description } });
    }
  } catch (error) {
    for (const handle of opened) handle.close();
    throw error;
  }
  return opened;
}

/**
 * Mesa's lavapipe gives every device a pool of worker threads, one per core. With several devices
 * busy at once the pools oversubscribe the CPU, and a fused kernel's spin-waiting workgroups take the
 * time slices its producers need: runs that take milliseconds alone took seconds, or timed out. One
 * thread per device runs a dispatch's workgroups one after another in ticket order, so a wait finds
 * its producer already done. Mesa reads LP_NUM_THREADS when it loads, so this only helps before the
 * first adapter of the process; a value the user set is left alone.
 */
function oneThreadPerSoftwareDevice(): void {
  process.env['LP_NUM_THREADS'] ??= '1';
}

function softwareDescription(handle: DeviceHandle): string {
  const { vendor, device, description } = handle.adapterInfo;
  const name = [vendor, device || description].filter((s) => s !== '').join(' ');
  return name === '' ? 'software' : `software (${name})`;
}

/**
 * Runs `fn` with `DRI_PRIME` set, then restores the previous value (or its absence). It stays set
 * through `requestAdapter` too, not only Dawn's `create()`: setting it before `create()` is what was
 * seen to work (DESIGN.md), and Dawn may enumerate Vulkan physical devices, which is when Mesa's
 * device-select layer reads it, only at the first `requestAdapter`.
 */
async function withDriPrime<T>(value: string, fn: () => Promise<T>): Promise<T> {
  const previous = process.env['DRI_PRIME'];
  process.env['DRI_PRIME'] = value;
  try {
    return await fn();
  } finally {
    if (previous === undefined) delete process.env['DRI_PRIME'];
    else process.env['DRI_PRIME'] = previous;
  }
}

/**
 * Rank → device index, blocked: ranks 0..k-1 on device 0, k..2k-1 on device 1, ... with
 * k = `ranksPerDevice`, by default ceil(ranks / devices) (so trailing devices may be left unused when
 * `devices` does not divide `ranks`). Throws a RangeError when an argument is not a positive integer
 * or the ranks do not fit (ranks > devices × ranksPerDevice).
 */
export function placeRanks(ranks: number, devices: number, ranksPerDevice?: number): number[] {
  const positive = (name: string, value: number) => {
    if (!Number.isInteger(value) || value < 1) {
      throw new RangeError(`placeRanks: ${name} must be an integer >= 1, got ${value}`);
    }
  };
  positive('ranks', ranks);
  positive('devices', devices);
  const k = ranksPerDevice ?? Math.ceil(ranks / devices);
  if (ranksPerDevice !== undefined) positive('ranksPerDevice', ranksPerDevice);
  if (ranks > devices * k) {
    throw new RangeError(
      `placeRanks: ${ranks} ranks do not fit on ${devices} device${devices === 1 ? '' : 's'} at ` +
        `${k} rank${k === 1 ? '' : 's'} per device (${devices * k} slots); ` +
        `use ranksPerDevice >= ${Math.ceil(ranks / devices)} or more devices`,
    );
  }
  return Array.from({ length: ranks }, (_, r) => Math.floor(r / k));
}
