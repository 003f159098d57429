/**
 * `@syncopate/core`, in three layers whose imports run one way (test/layering.test.ts checks it):
 *   api/        compile, and the run API: device groups, programs, tensors, sessions
 *   workloads/, layers/  the workload library: kernels, chunk plans, inputs, CPU references (uses api/)
 *   tools/      the CLI, runner, bench, tuner, cost model, plots and traces (uses both)
 */
export * from '@syncopate/ir';
export * from '@syncopate/passes';
// api
export * from './api/pipeline.js';
export * from './api/compile-error.js';
export * from './api/compile.js';
export * from './api/index.js';
export * from './api/run-recording.js';
export { fromHalfBits, toHalfBits } from './api/half.js';
// the workload library
export * from './workloads/index.js';
export * from './layers/index.js';
export * from './layers/check.js';
// tools
export * from './tools/run.js';
export { RUN_BACKENDS, RUN_ORDERS, RUN_TARGETS, type RunBackend, type RunOrder, type RunTarget } from './tools/run-report.js';
export * from './tools/stats.js';
export * from './tools/bench.js';
export { burnGpus } from './tools/gpu-burn.js';
export { roundOrders, timeInRounds, type RoundsOptions, type TimedPart } from './tools/timed-rounds.js';
export { alignedTable, formatRunReport, runReportRows } from './tools/report-format.js';
export * from './tools/plots.js';
export * from './tools/trace.js';
export * from './tools/transfer-plan.js';
export * from './tools/autotune.js';
export * from './tools/cost-model.js';
export * from './tools/cost-report.js';
export * from './tools/tp-layer-runner.js';
