export * from './access-sites.js';
export * from './align.js';
export * from './domains.js';
export * from './read-regions.js';
export * from './touch.js';
export * from './validate-plan.js';
export * from './landing.js';
export * from './tile-alignment.js';
