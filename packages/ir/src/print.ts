/** The printer to the textual form. Stub; being written. */
import type { Module } from './types.js';

export function print(m: Module): string {
  return `module @${m.name}\n`;
}
