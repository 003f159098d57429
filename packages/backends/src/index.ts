export * from './control.js';
export * from './fused-kernel.js';
export * from './gpu-signal/chunk-table.js';
export { emitFusedKernel, type CodegenOptions } from './wgsl/emit-kernel.js';
