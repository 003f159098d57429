export { openDeviceGroup, DeviceGroup, type DeviceGroupOptions } from './device-group.js';
export { Program, type LoadOptions, type ProgramRunOptions } from './program.js';
export { Tensor } from './tensor.js';
export { TensorInputError } from './errors.js';
export type { RankArrays, TensorInit } from './tensor-data.js';
export type { TensorSpec } from './tensor-spec.js';
export { checkSamePlan, devicesOverProcesses, PlanMismatchError, type ProcessPlacement, type RankProcesses } from './processes.js';
// Ranks as processes: the MPI job this process is one of (runtime's process group).
export { joinProcessGroup, launchedByMpi, ProcessGroupError, ProcessLostError, ProcessTimeoutError, type ProcessGroup, type JoinOptions } from '@syncopate/runtime';
