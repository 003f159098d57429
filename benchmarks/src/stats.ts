/** Median and spread of repeated timings (from core). */
export { summarize, type Summary } from '@syncopate/core';
