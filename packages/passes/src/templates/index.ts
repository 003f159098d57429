export * from './collectives.js';
export * from './plan-json.js';
export { slab, shardPieces, type TemplateOptions, type TensorLike } from './slabs.js';
