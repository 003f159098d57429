/**
 * The control buffer every fused kernel shares across its workgroups (all atomic u32): a ticket
 * counter, the first error, per chunk part a flag (set once it is published) and a requirement
 * counter, and the reduce-add locks.
 */
export const CONTROL = {
  ticket: 0,
  errorCode: 1,
  errorChunk: 2,
  errorRank: 3,
  header: 4,
} as const;

/** What a failed kernel wrote into the control buffer's error slots. */
export const KERNEL_ERRORS = {
  1: 'wait-timeout',
  2: 'lock-timeout',
} as const;

export interface ControlLayout {
  readonly flags: number;
  readonly counters: number;
  readonly locks: number;
  readonly words: number;
}

export function controlLayout(parts: number, locks: number): ControlLayout {
  const flags = CONTROL.header;
  const counters = flags + parts;
  const lockBase = counters + parts;
  return { flags, counters, locks: lockBase, words: lockBase + Math.max(locks, 1) };
}
