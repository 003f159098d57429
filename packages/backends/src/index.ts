export * from './control.js';
export * from './fused-kernel.js';
export * from './gpu-signal/chunk-table.js';
export { emitFusedKernel, emitPlacedKernels, type CodegenOptions, type DeviceKernel, type PlacedKernels } from './wgsl/emit-kernel.js';
export * from './wgsl/matmul-strategy.js';
export { NEVER, type DeviceView, type PhaseView } from './placement/device-view.js';
export { chunkRoutes, planPhases, PhaseError, type ChunkRoute, type PhasePlan } from './placement/phases.js';
export { chunkTransfer, type ChunkTransfer, type ByteRun } from './placement/transfers.js';
export { placedTransfers, TransferAlignmentError, type PlacedTransfer, type TransferPlacement } from './placement/aligned-transfers.js';
