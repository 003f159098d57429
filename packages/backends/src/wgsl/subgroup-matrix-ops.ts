/**
 * The WGSL text of subgroup-matrix operations, in two forms behind one interface:
 *
 * - native: Dawn's `chromium_experimental_subgroup_matrix` builtins in their current form,
 *   `subgroupMatrixLoad<T, row_major>(p, offset, stride)` and `subgroupMatrixStore<row_major>(p,
 *   offset, value, stride)`. The older form with a `col_major: bool` argument is deprecated (Dawn
 *   warns, and Tint's main branch has removed it). Offsets and strides count elements of the array,
 *   whose element type is the matrix's scalar type here, so old and new Dawn read them alike.
 * - emulated: each invocation holds a whole matrix in a private array and computes every element
 *   itself. It has the semantics the proposal gives the builtins (row-major entry [r, c] at
 *   offset + r·stride + c; f32 products summed in f32), so a kernel's staging, indexing and edge
 *   handling can be run and checked on an adapter without subgroup matrices (lavapipe in CI).
 *   It is a test vehicle, far too slow for anything else.
 *
 * Every operation is a statement, so the emulation can be loops.
 */
import type { SubgroupMatrixConfig } from './matmul-strategy.js';
import type { WgslWriter } from './writer.js';

export type MatrixRole = 'left' | 'right' | 'result';

export interface MatrixOps {
  /** `enable` lines the kernel needs. */
  readonly enables: readonly string[];
  /** Extra parameters of the entry point (the native `subgroup_id`). */
  readonly entryParams: string;
  /** Statements that define `sg_id`, the subgroup's index in the workgroup (subgroup-uniform). */
  defineSubgroupId(w: WgslWriter, subgroupSize: number): void;
  /** The WGSL type of a matrix of `role`. */
  type(role: MatrixRole): string;
  /** `var name: array<type(role), count>` zero-filled, or filled with the scalar expression `fill`. */
  declareArray(w: WgslWriter, name: string, role: MatrixRole, count: number, fill?: string): void;
  /** `target = load` of a row-major matrix at `offset` (elements) of the array `array` with row stride `stride`. */
  load(w: WgslWriter, target: string, role: MatrixRole, array: string, offset: string, stride: string): void;
  /** Stores `value` row-major into `array` (elements of type `elementType`) at `offset` with row stride `stride`. */
  store(w: WgslWriter, array: string, elementType: string, offset: string, value: string, role: MatrixRole, stride: string): void;
  /** `acc = a·b + acc`. */
  multiplyAccumulate(w: WgslWriter, acc: string, a: string, b: string): void;
}

/** Rows and columns of a matrix of `role` in `config`. */
export function matrixShape(config: SubgroupMatrixConfig, role: MatrixRole): [number, number] {
  if (role === 'left') return [config.M, config.K];
  if (role === 'right') return [config.K, config.N];
  return [config.M, config.N];
}

export function nativeMatrixOps(config: SubgroupMatrixConfig): MatrixOps {
  const type = (role: MatrixRole) => {
    // subgroup_matrix_left<T, K, M>, _right<T, N, K>, _result<T, N, M>: columns, then rows.
    const [rows, cols] = matrixShape(config, role);
    const scalar = role === 'result' ? config.resultComponentType : config.componentType;
    return `subgroup_matrix_${role}<${scalar}, ${cols}, ${rows}>`;
  };
  return {
    enables: ['enable subgroups;', 'enable chromium_experimental_subgroup_matrix;'],
    entryParams: ', @builtin(subgroup_id) sg_id: u32',
    defineSubgroupId: () => {},
    type,
    declareArray(w, name, role, count, fill) {
      w.line(`var ${name}: array<${type(role)}, ${count}>;`);
      if (fill !== undefined) for (let f = 0; f < count; f++) w.line(`${name}[${f}] = ${type(role)}(${fill});`);
    },
    load(w, target, role, array, offset, stride) {
      w.line(`${target} = subgroupMatrixLoad<${type(role)}, row_major>(&${array}, ${offset}, ${stride});`);
    },
    store(w, array, _elementType, offset, value, _role, stride) {
      w.line(`subgroupMatrixStore<row_major>(&${array}, ${offset}, ${value}, ${stride});`);
    },
    multiplyAccumulate(w, acc, a, b) {
      w.line(`${acc} = subgroupMatrixMultiplyAccumulate(${a}, ${b}, ${acc});`);
    },
  };
}

export function emulatedMatrixOps(config: SubgroupMatrixConfig): MatrixOps {
  const size = (role: MatrixRole) => matrixShape(config, role).reduce((a, b) => a * b, 1);
  const type = (role: MatrixRole) => `array<f32, ${size(role)}>`;
  return {
    enables: [],
    entryParams: '',
    // Invocations lid / size form "subgroups" of the given size, as a real subgroup would be formed.
    defineSubgroupId: (w, subgroupSize) => w.line(`let sg_id = lid / ${subgroupSize}u;`),
    type,
    declareArray(w, name, role, count, fill) {
      w.line(`var ${name}: array<${type(role)}, ${count}>;`);
      if (fill !== undefined) {
        w.line(`for (var f = 0u; f < ${count}u; f++) { for (var x = 0u; x < ${size(role)}u; x++) { ${name}[f][x] = f32(${fill}); } }`);
      }
    },
    load(w, target, role, array, offset, stride) {
      const [rows, cols] = matrixShape(config, role);
      w.block('', () => {
        w.line(`let at = ${offset};`);
        w.line(`let stride = ${stride};`);
        w.line(`for (var r = 0u; r < ${rows}u; r++) { for (var c = 0u; c < ${cols}u; c++) { ${target}[r * ${cols}u + c] = f32(${array}[at + r * stride + c]); } }`);
      });
    },
    store(w, array, elementType, offset, value, role, stride) {
      const [rows, cols] = matrixShape(config, role);
      w.block('', () => {
        w.line(`let at = ${offset};`);
        w.line(`let stride = ${stride};`);
        w.line(`for (var r = 0u; r < ${rows}u; r++) { for (var c = 0u; c < ${cols}u; c++) { ${array}[at + r * stride + c] = ${elementType}(${value}[r * ${cols}u + c]); } }`);
      });
    },
    multiplyAccumulate(w, acc, a, b) {
      const { M, N, K } = config;
      w.block(`for (var r = 0u; r < ${M}u; r++)`, () =>
        w.block(`for (var c = 0u; c < ${N}u; c++)`, () => {
          w.line(`var s = ${acc}[r * ${N}u + c];`);
          w.line(`for (var k = 0u; k < ${K}u; k++) { s = fma(${a}[r * ${K}u + k], ${b}[k * ${N}u + c], s); }`);
          w.line(`${acc}[r * ${N}u + c] = s;`);
        }),
      );
    },
  };
}
