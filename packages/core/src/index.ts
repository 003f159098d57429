export * from '@syncopate/ir';
export * from '@syncopate/passes';
export * from './pipeline.js';
export * from './errors.js';
export * from './compile.js';
export * from './run.js';
export * from './workloads/index.js';
