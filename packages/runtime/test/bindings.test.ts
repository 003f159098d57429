import { describe, expect, it } from 'vitest';
import { readOnlyBindings } from '../src/bindings.js';

describe('readOnlyBindings', () => {
  it('finds the group-0 bindings declared var<storage, read>, in any attribute order', () => {
    const wgsl = `
      @group(0) @binding(0) var<storage, read> a: array<f32>;
      @binding(1) @group(0) var<storage,read> b: array<f32>;
      @group(0) @binding(2) var<storage, read_write> c: array<f32>;
      @group(0) @binding(3) var<uniform> u: vec4u;
      @group(1) @binding(4) var<storage, read> other: array<f32>;
      // @group(0) @binding(5) var<storage, read> commented: array<f32>;
      /* @group(0) @binding(6) var<storage, read> also: array<f32>; */
    `;
    expect([...readOnlyBindings(wgsl)].sort()).toEqual([0, 1]);
  });
});
