/**
 * The explicit bind group layout of a kernel. Storage buffers are read_write unless the WGSL declares
 * the binding `var<storage, read>`: WebGPU rejects a layout of type 'storage' for a read-only variable,
 * so the access mode is read from the shader rather than asked of every caller.
 */

export type BufferUsageKind = 'storage' | 'uniform';

/** Bindings of group 0 that the WGSL declares `var<storage, read>`. */
export function readOnlyBindings(wgsl: string): Set<number> {
  const code = wgsl.replace(/\/\*[\s\S]*?\*\//g, ' ').replace(/\/\/[^\n]*/g, ' ');
  const declaration = /((?:@\w+\s*(?:\([^)]*\))?\s*)+)var\s*<\s*storage\s*,\s*read\s*>/g;
  const found = new Set<number>();
  for (const match of code.matchAll(declaration)) {
    const attributes = match[1] ?? '';
    const group = /@group\s*\(\s*(\d+)\s*\)/.exec(attributes)?.[1];
    const binding = /@binding\s*\(\s*(\d+)\s*\)/.exec(attributes)?.[1];
    if (group === '0' && binding !== undefined) found.add(Number(binding));
  }
  return found;
}

export function bindGroupLayoutEntries(
  wgsl: string,
  bindings: readonly { binding: number; usage: BufferUsageKind }[],
): GPUBindGroupLayoutEntry[] {
  const readOnly = readOnlyBindings(wgsl);
  return bindings.map(({ binding, usage }) => ({
    binding,
    visibility: GPUShaderStage.COMPUTE,
    buffer: {
      type: usage === 'uniform' ? 'uniform' : readOnly.has(binding) ? 'read-only-storage' : 'storage',
    },
  }));
}
