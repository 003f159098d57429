/**
 * How a kernel's tile-level `dot` is lowered: the SIMT register-tiled loop (every adapter), or
 * subgroup matrices (tensor cores; Dawn's `chromium-experimental-subgroup-matrix`). The choice is a
 * pure function of what an adapter offers, so it is tested from given feature sets and a caller can
 * name a target without an adapter (CodegenOptions.target).
 */

/** One shape of subgroup matrix multiply an adapter offers (`GPUSubgroupMatrixConfig`). */
export interface SubgroupMatrixConfig {
  readonly componentType: string;
  readonly resultComponentType: string;
  readonly M: number;
  readonly N: number;
  readonly K: number;
}

export interface SubgroupMatrixTarget {
  readonly config: SubgroupMatrixConfig;
  /**
   * Subgroups along M and N of a workgroup tile (default: 8 subgroups where the tile has at least 4
   * matrices for each, fewer for small tiles; see subgroup-matrix.ts, `subgroupGrid`).
   */
  readonly subgroups?: readonly [number, number];
  /** Invocations per subgroup the kernel is written for: the adapter's subgroupMaxSize (default 32). */
  readonly subgroupSize?: number;
  /**
   * Workgroup memory the kernel may use, in bytes (default 49152, the H100's
   * maxComputeWorkgroupStorageSize): the A and B tiles are double-buffered where both copies fit.
   */
  readonly workgroupBytes?: number;
  /**
   * Emit the same kernel with each matrix held whole by every invocation instead of the subgroup
   * matrix builtins (subgroup-matrix-ops.ts): for checking its indexing on adapters without them.
   */
  readonly emulate?: boolean;
}

/** What codegen is told: a strategy by name, or a subgroup-matrix configuration. */
export type MatmulTarget = 'simt' | 'subgroup-matrix' | SubgroupMatrixTarget;

/** The targets a user can name (`syncopate compile --target`), without an adapter. */
export const MATMUL_TARGET_NAMES = ['simt', 'subgroup-matrix'] as const;
export type MatmulTargetName = (typeof MATMUL_TARGET_NAMES)[number];

export type MatmulStrategy =
  | { readonly kind: 'simt'; readonly reason: string }
  | { readonly kind: 'subgroup-matrix'; readonly target: SubgroupMatrixTarget };

export interface MatmulDTypes {
  /** Element type of both dot operands. */
  readonly input: 'f16' | 'f32';
  /** Element type of the accumulator. */
  readonly accumulate: 'f16' | 'f32';
}

export const SUBGROUP_MATRIX_FEATURE = 'chromium-experimental-subgroup-matrix';

/** The configuration H100 offers for f16 inputs with f32 accumulation (DESIGN.md, facts). */
export const F16_F32_16x16x16: SubgroupMatrixConfig = { componentType: 'f16', resultComponentType: 'f32', M: 16, N: 16, K: 16 };

/**
 * Subgroup matrices where the adapter has the feature (and `shader-f16` for f16 inputs) and a
 * configuration with the dot's component types; among those the one with the most multiply-adds per
 * instruction (M·N·K), then the squarest. Otherwise SIMT, with the reason.
 */
export function chooseMatmulStrategy(
  features: Iterable<string>,
  subgroupMatrixConfigs: readonly SubgroupMatrixConfig[],
  dtypes: MatmulDTypes,
  subgroupSize?: number,
): MatmulStrategy {
  const has = new Set(features);
  if (!has.has(SUBGROUP_MATRIX_FEATURE)) return { kind: 'simt', reason: `the adapter has no ${SUBGROUP_MATRIX_FEATURE}` };
  if (!has.has('subgroups')) return { kind: 'simt', reason: 'the adapter has no subgroups' };
  if (dtypes.input === 'f16' && !has.has('shader-f16')) return { kind: 'simt', reason: 'the adapter has no shader-f16' };
  const fits = subgroupMatrixConfigs.filter((c) => c.componentType === dtypes.input && c.resultComponentType === dtypes.accumulate);
  if (fits.length === 0) {
    return { kind: 'simt', reason: `no subgroup matrix configuration multiplies ${dtypes.input} into ${dtypes.accumulate}` };
  }
  const best = [...fits].sort((a, b) => b.M * b.N * b.K - a.M * a.N * a.K || Math.abs(a.M - a.N) - Math.abs(b.M - b.N))[0]!;
  return { kind: 'subgroup-matrix', target: { config: best, ...(subgroupSize !== undefined && { subgroupSize }) } };
}

/** The subgroup-matrix target a caller named, or undefined for SIMT; by name it means F16_F32_16x16x16. */
export function resolveTarget(target: MatmulTarget | undefined): SubgroupMatrixTarget | undefined {
  if (target === undefined || target === 'simt') return undefined;
  if (target === 'subgroup-matrix') return { config: F16_F32_16x16x16 };
  return target;
}
