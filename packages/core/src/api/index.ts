export { openDeviceGroup, DeviceGroup, type DeviceGroupOptions } from './device-group.js';
export { Program, type LoadOptions, type ProgramRunOptions } from './program.js';
export { Tensor } from './tensor.js';
export { TensorInputError } from './errors.js';
export type { RankArrays, TensorInit } from './tensor-data.js';
export type { TensorSpec } from './tensor-spec.js';
