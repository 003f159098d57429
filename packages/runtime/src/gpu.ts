import { LimitExceededError, NoAdapterError, UsageError } from './errors.js';
import { withTimeout } from './timeout.js';

/** A WebGPU entry point: the browser's `navigator.gpu`, or a Dawn instance in Node. */
export interface GpuHandle {
  readonly gpu: GPU;
  readonly environment: 'node' | 'browser';
  /** Dawn toggles the instance was created with (always empty in a browser). */
  readonly toggles: readonly string[];
  readonly powerPreference?: GPUPowerPreference;
}

export interface OpenGpuOptions {
  /** Dawn instance options, e.g. `enable-dawn-features=allow_unsafe_apis`. Node only. */
  readonly toggles?: readonly string[];
  readonly powerPreference?: GPUPowerPreference;
  /**
   * Keep Dawn's timestamp quantization (default false: it is turned off). Dawn rounds timestamps down to
   * a multiple of 65.536 µs unless told not to, which makes a short kernel read as 0 ms on a real GPU.
   * Node has no timing attacks to fear. Node only.
   */
  readonly timestampQuantization?: boolean;
  /**
   * Enable the Dawn features that let NVIDIA's Vulkan adapter offer `shader-f16` and
   * `chromium-experimental-subgroup-matrix` (default true): `allow_unsafe_apis` (the subgroup-matrix
   * feature is experimental) and `vulkan_enable_f16_on_nvidia`. Adapters that lack them are unaffected.
   * Node only.
   */
  readonly tensorCores?: boolean;
  /**
   * Keep Dawn's bounds checks on shader memory accesses (default true). `false` sets Dawn's
   * `disable_robustness`: an out-of-bounds access is then undefined, as in CUDA. syncopate's kernels
   * guard their own edges (the fuzz and edge tests check them), and on the H100 the emitted f16 GEMM ran
   * 1.29x faster without the checks (benchmarks/gemm.md); every WGSL module on such a device must be
   * trusted to stay in bounds. Node only.
   */
  readonly robustness?: boolean;
}

/** The Dawn features `tensorCores` enables (DESIGN.md, facts: tensor cores from WGSL). */
export const TENSOR_CORE_FEATURES = ['allow_unsafe_apis', 'vulkan_enable_f16_on_nvidia'] as const;

type DawnModule = { create(options: string[]): GPU; globals: object };

let dawn: Promise<DawnModule> | undefined;
const instances = new Map<string, GPU>();

const isNode = typeof process !== 'undefined' && typeof process.versions?.node === 'string';

/**
 * Opens WebGPU. In Node, Dawn (`webgpu` on npm) is imported on first use, so a browser bundle never
 * needs it; its globals (`GPUBufferUsage`, ...) are installed once, and one instance is kept per set of
 * toggles. `DRI_PRIME` is part of that key because Mesa reads it when the instance is created: that is
 * how a second physical GPU is opened (see DESIGN.md, Runtime).
 */
export async function openGpu(options: OpenGpuOptions = {}): Promise<GpuHandle> {
  let toggles = options.timestampQuantization
    ? [...(options.toggles ?? [])]
    : withDisabledFeature(options.toggles ?? [], 'timestamp_quantization');
  if (options.tensorCores ?? true) {
    for (const feature of TENSOR_CORE_FEATURES) toggles = withDawnFeature(toggles, 'enable', feature);
  }
  if (options.robustness === false) toggles = withDawnFeature(toggles, 'enable', 'disable_robustness');
  if (isNode) toggles = withEnvironmentFeatures(toggles, process.env);
  const powerPreference = options.powerPreference;
  if (!isNode) {
    const gpu = (globalThis as { navigator?: { gpu?: GPU } }).navigator?.gpu;
    if (gpu === undefined) throw new NoAdapterError('this environment has no navigator.gpu');
    return { gpu, environment: 'browser', toggles: [], ...(powerPreference && { powerPreference }) };
  }
  // The project's lavapipe setup asks for it; Dawn on Mesa 25 worked without it too, and it costs nothing.
  if (process.platform === 'linux' && !process.env['XDG_RUNTIME_DIR']) process.env['XDG_RUNTIME_DIR'] = '/tmp';
  const { create, globals } = await loadDawn();
  const key = JSON.stringify([[...toggles].sort(), process.env['DRI_PRIME'] ?? '']);
  let gpu = instances.get(key);
  if (gpu === undefined) {
    gpu = create(toggles);
    instances.set(key, gpu);
  }
  return { gpu, environment: 'node', toggles, ...(powerPreference && { powerPreference }) };
}

/** Whether a device from an instance with these toggles bounds-checks shader memory accesses. */
export function hasRobustness(toggles: readonly string[]): boolean {
  const key = 'enable-dawn-features=';
  return !toggles.some((t) => t.startsWith(key) && t.slice(key.length).split(',').includes('disable_robustness'));
}

/**
 * Dawn features named by `SYNCOPATE_DAWN_ENABLE` and `SYNCOPATE_DAWN_DISABLE` (comma lists, e.g.
 * `disable_robustness`), merged into the instance's options: how a benchmark tries a Dawn toggle on
 * every device a run opens without a code change. Reports list the toggles a device had.
 */
export function withEnvironmentFeatures(toggles: readonly string[], env: Record<string, string | undefined>): string[] {
  let merged = [...toggles];
  for (const [how, name] of [['enable', 'SYNCOPATE_DAWN_ENABLE'], ['disable', 'SYNCOPATE_DAWN_DISABLE']] as const) {
    for (const feature of (env[name] ?? '').split(',').map((f) => f.trim())) {
      if (feature !== '') merged = withDawnFeature(merged, how, feature);
    }
  }
  return merged;
}

/** Dawn reads each `key=value` option once, so a feature to disable joins the caller's own list. */
export function withDisabledFeature(toggles: readonly string[], feature: string): string[] {
  return withDawnFeature(toggles, 'disable', feature);
}

/** Adds `feature` to the caller's `enable-dawn-features=` (or `disable-…`) option, or adds that option. */
export function withDawnFeature(toggles: readonly string[], how: 'enable' | 'disable', feature: string): string[] {
  const key = `${how}-dawn-features=`;
  const i = toggles.findIndex((t) => t.startsWith(key));
  if (i < 0) return [...toggles, key + feature];
  const features = toggles[i]!.slice(key.length).split(',').filter((f) => f !== '');
  if (features.includes(feature)) return [...toggles];
  return toggles.map((t, j) => (j === i ? key + [...features, feature].join(',') : t));
}

function loadDawn(): Promise<DawnModule> {
  dawn ??= (async () => {
    // A specifier in a variable keeps bundlers from following it into a browser build.
    const specifier = 'webgpu';
    const mod = (await import(/* @vite-ignore */ specifier)) as DawnModule;
    for (const [name, value] of Object.entries(mod.globals)) {
      if (!(name in globalThis)) Object.defineProperty(globalThis, name, { value, writable: true, configurable: true });
    }
    return mod;
  })();
  return dawn;
}

/** The limits the runtime reads by name; every other limit of the device is there by its WebGPU name. */
export interface DeviceLimits {
  readonly maxStorageBufferBindingSize: number;
  readonly maxUniformBufferBindingSize: number;
  readonly maxBufferSize: number;
  readonly maxComputeWorkgroupStorageSize: number;
  readonly maxComputeInvocationsPerWorkgroup: number;
  readonly maxComputeWorkgroupsPerDimension: number;
  readonly maxStorageBuffersPerShaderStage: number;
  readonly [name: string]: number;
}

export interface AdapterInfo {
  readonly vendor: string;
  readonly architecture: string;
  readonly device: string;
  readonly description: string;
}

/** One shape of subgroup matrix multiply the adapter offers (`GPUSubgroupMatrixConfig`). */
export interface SubgroupMatrixConfig {
  readonly componentType: string;
  readonly resultComponentType: string;
  readonly M: number;
  readonly N: number;
  readonly K: number;
}

export interface DeviceHandle {
  readonly device: GPUDevice;
  readonly adapterInfo: AdapterInfo;
  /** Features the device has. */
  readonly features: readonly string[];
  /** Dawn toggles of the instance the device came from (empty in a browser): results say them. */
  readonly toggles: readonly string[];
  /** The adapter's subgroup matrix configurations; empty unless the device has the feature. */
  readonly subgroupMatrixConfigs: readonly SubgroupMatrixConfig[];
  /** The adapter's largest subgroup size, where it says (a subgroup-matrix kernel's workgroup is a multiple). */
  readonly subgroupMaxSize?: number;
  /** Requested features the adapter does not offer (so they were not requested). */
  readonly missingFeatures: readonly string[];
  readonly limits: DeviceLimits;
  readonly hasTimestamps: boolean;
  /** Destroys the device; safe to call twice. */
  close(): void;
}

export interface RequestDeviceOptions {
  /** Requested where the adapter has them; default: timestamp-query, shader-f16, subgroups, chromium-experimental-subgroup-matrix. */
  readonly requiredFeatures?: readonly GPUFeatureName[];
  /**
   * Default: the adapter's maxima for buffer sizes and compute limits (the WebGPU defaults are
   * 128 MiB bindings and 256 MiB buffers). 'adapter-max': every limit at the adapter's maximum.
   */
  readonly requiredLimits?: 'adapter-max' | Readonly<Record<string, number>>;
  /** For requestAdapter and requestDevice each; default 30 s. */
  readonly timeoutMs?: number;
}

export const SUBGROUP_MATRIX_FEATURE = 'chromium-experimental-subgroup-matrix' as GPUFeatureName;

export const DEFAULT_FEATURES: readonly GPUFeatureName[] = ['timestamp-query', 'shader-f16', 'subgroups', SUBGROUP_MATRIX_FEATURE];

/** Limits raised to the adapter's maxima unless the caller says otherwise: big tensors must fit. */
const COMPUTE_LIMITS = [
  'maxStorageBufferBindingSize',
  'maxUniformBufferBindingSize',
  'maxBufferSize',
  'maxStorageBuffersPerShaderStage',
  'maxComputeWorkgroupStorageSize',
  'maxComputeInvocationsPerWorkgroup',
  'maxComputeWorkgroupSizeX',
  'maxComputeWorkgroupSizeY',
  'maxComputeWorkgroupSizeZ',
  'maxComputeWorkgroupsPerDimension',
];

/**
 * Opens a device on a fresh adapter. One `requestAdapter` per device: an adapter can hand out only one
 * device, and Dawn gives a new adapter object each call, so several devices can share one GPU.
 */
export async function requestDevice(gpu: GpuHandle, options: RequestDeviceOptions = {}): Promise<DeviceHandle> {
  const timeoutMs = options.timeoutMs ?? 30_000;
  const adapter = await withTimeout(
    gpu.gpu.requestAdapter(gpu.powerPreference ? { powerPreference: gpu.powerPreference } : undefined),
    timeoutMs,
    'requestAdapter',
  );
  if (adapter === null) throw new NoAdapterError(`requestAdapter() returned null (${gpu.environment})`);

  const wanted = options.requiredFeatures ?? DEFAULT_FEATURES;
  const requiredFeatures = wanted.filter((f) => adapter.features.has(f));
  const requiredLimits = limitsToRequest(adapter.limits, options.requiredLimits);
  const device = await withTimeout(
    adapter.requestDevice({ requiredFeatures, requiredLimits }),
    timeoutMs,
    'requestDevice',
  );

  const info = adapter.info as GPUAdapterInfo & { subgroupMatrixConfigs?: readonly SubgroupMatrixConfig[]; subgroupMaxSize?: number };
  const hasMatrices = device.features.has(SUBGROUP_MATRIX_FEATURE);
  let closed = false;
  return {
    device,
    adapterInfo: {
      vendor: info.vendor,
      architecture: info.architecture,
      device: info.device,
      description: info.description,
    },
    features: [...device.features].sort(),
    toggles: gpu.toggles,
    subgroupMatrixConfigs: hasMatrices ? readConfigs(info.subgroupMatrixConfigs) : [],
    ...(typeof info.subgroupMaxSize === 'number' && { subgroupMaxSize: info.subgroupMaxSize }),
    missingFeatures: wanted.filter((f) => !adapter.features.has(f)),
    limits: readLimits(device.limits) as DeviceLimits,
    hasTimestamps: device.features.has('timestamp-query'),
    close() {
      if (closed) return;
      closed = true;
      device.destroy();
    },
  };
}

/** Plain copies: Dawn's config objects keep their fields on the prototype, which JSON.stringify skips. */
function readConfigs(configs: readonly SubgroupMatrixConfig[] | undefined): SubgroupMatrixConfig[] {
  return [...(configs ?? [])].map((c) => ({
    componentType: c.componentType,
    resultComponentType: c.resultComponentType,
    M: c.M,
    N: c.N,
    K: c.K,
  }));
}

function limitsToRequest(
  adapterLimits: GPUSupportedLimits,
  request: RequestDeviceOptions['requiredLimits'],
): Record<string, number> {
  const available = readLimits(adapterLimits);
  if (request === 'adapter-max') return available;
  if (request === undefined) {
    return Object.fromEntries(COMPUTE_LIMITS.filter((k) => k in available).map((k) => [k, available[k]!]));
  }
  for (const [name, value] of Object.entries(request)) {
    const max = available[name];
    if (max === undefined) throw new UsageError(`unknown device limit "${name}"`);
    // Limits named min* are better when lower; the others when higher.
    const better = name.startsWith('min') ? value < max : value > max;
    if (better) throw new LimitExceededError(`requiredLimits.${name}`, `adapter ${name}`, value, max);
  }
  return { ...request };
}

/** Limits are getters on the prototype (Object.keys sees none), so walk them with for-in. */
function readLimits(limits: GPUSupportedLimits): Record<string, number> {
  const out: Record<string, number> = {};
  for (const name in limits) {
    const value = (limits as unknown as Record<string, unknown>)[name];
    if (typeof value === 'number') out[name] = value;
  }
  return out;
}
