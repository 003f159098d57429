/** Freezes a value and everything it holds, so a pass that mutates a module fails loudly. */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    // Passes freeze what they add on every run: index loops, and no call for a number or a string.
    const held: readonly unknown[] = Array.isArray(value) ? value : Object.values(value);
    for (let i = 0; i < held.length; i++) {
      const v = held[i];
      if (v !== null && typeof v === 'object') deepFreeze(v);
    }
  }
  return value;
}
