export {
  RuntimeError,
  NoAdapterError,
  ShaderCompileError,
  OutOfMemoryError,
  LimitExceededError,
  DeviceLostError,
  GpuTimeoutError,
  ValidationError,
  UsageError,
  PeerCopyError,
  ProcessGroupError,
  ProcessTimeoutError,
  ProcessLostError,
  ProcessTransferError,
  type ProcessOperation,
  type ShaderMessage,
} from './errors.js';
export { withTimeout } from './timeout.js';
export {
  openGpu,
  requestDevice,
  DEFAULT_FEATURES,
  SUBGROUP_MATRIX_FEATURE,
  TENSOR_CORE_FEATURES,
  withDawnFeature,
  hasRobustness,
  type SubgroupMatrixConfig,
  type GpuHandle,
  type OpenGpuOptions,
  type RequestDeviceOptions,
  type DeviceHandle,
  type DeviceLimits,
  type AdapterInfo,
} from './gpu.js';
export {
  Executor,
  type BufferSpec,
  type KernelSpec,
  type CompiledKernel,
  type KernelPipeline,
  type Launch,
  type RunOptions,
  type RunResult,
  type ExecutorOptions,
  type Workgroups,
} from './executor.js';
export {
  listPciGpus,
  driPrimeOf,
  openDevices,
  placeRanks,
  type PciGpu,
  type DevicePlacement,
  type PlacedDeviceHandle,
  type OpenDevicesOptions,
} from './discovery.js';
export { GpuClock, type PassSpan, type PassTicks } from './timestamps.js';
export { copyMapped, hostCopier, jsHostCopy, type HostCopier, type HostCopierOptions, type HostCopyStores } from './host-copy.js';
export { PeerCopier, type PeerCopy, type BufferRange, type PeerCopierOptions, type PieceStages, type TransferFlow, type TransferStages } from './peer-copy.js';
export { sendRuns, receiveRuns, messageCount, type ProcessLink, type ProcessEnd } from './process-transfer.js';
export { joinProcessGroup, launchedByMpi, type ProcessGroup, type JoinOptions } from './mpi/process-group.js';
