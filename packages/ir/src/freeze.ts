/** Freezes a value and everything it holds, so a pass that mutates a module fails loudly. */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    // Passes freeze what they add on every run (thousands of chunks and waits at 64 ranks): index
    // loops, no call for a number or a string, and no array of values per object (for-in, not
    // Object.values: half the time; the IR's objects are plain, with no enumerable inherited keys).
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) {
        const v: unknown = value[i];
        if (v !== null && typeof v === 'object') deepFreeze(v);
      }
    } else {
      for (const key in value) {
        const v: unknown = value[key];
        if (v !== null && typeof v === 'object') deepFreeze(v);
      }
    }
  }
  return value;
}
