/** The verifier: SSA and type rules of the IR. Stub; being written. */
import type { Diagnostic } from './diagnostics.js';
import type { Module } from './types.js';

export function verify(_m: Module): Diagnostic[] {
  return [];
}
