/** Layers built from compiled kernels on the run API: the tensor-parallel transformer layer. */
export { tpLayerShape, tpAttentionWorkgroupBytes, tpAttentionMatrixBytes, TP_ATTENTION_MAX_WORKGROUP_BYTES, TP_ATTENTION_TENSOR_CORE_TILE, TP_ATTENTION_WORKGROUP_BYTES, type AttentionTile, type TpLayerConfig, type TpLayerShape } from './config.js';
export { rmsNormKernel, type RmsNormShape } from './rms-norm.js';
export { residualKernel, type ResidualShape } from './residual.js';
export { swigluKernel, type SwigluShape } from './swiglu.js';
export { causalAttentionKernel, causalMask, causalMaskShape, MASKED_SCORE, type CausalAttentionShape } from './causal-attention.js';
export { qkvHalfKernel, type QkvHalfShape } from './qkv-half.js';
export {
  tpLayer,
  matrixAttentionKernels,
  tpLayerInputSpecs,
  LoadedTpLayer,
  type TpLayer,
  type TpLayerGemmName,
  type TpLayerInputs,
  type TpLayerKernelName,
  type TpLayerKernels,
  type TpLayerLoadOptions,
  type TpLayerStep,
  type TpLayerTensors,
  type TpLayerVariant,
} from './tp-layer.js';
export { gemmTargetFor, type TpLayerGemmTarget } from './gemm-target.js';
export { tpLayerInputs } from './inputs.js';
export { tpLayerReference } from './reference.js';
