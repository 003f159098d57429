/** What the WGSL backend hands to a runtime: the shader, its buffers, and how to launch and read it. */
import { dtypeBytes, type DType, type Shape } from '@syncopate/ir';
import type { ControlLayout } from './control.js';

export interface TensorBinding {
  readonly name: string;
  readonly binding: number;
  readonly dtype: DType;
  readonly shape: Shape;
  /** Elements of one rank's copy; rank r's copy starts at element r·elementsPerRank. */
  readonly elementsPerRank: number;
}

export interface FusedKernel {
  readonly wgsl: string;
  readonly entryPoint: 'main';
  /** Ranks of the whole module; every tensor buffer holds a copy per rank (a mailbox for ranks elsewhere). */
  readonly ranks: number;
  /** The ranks whose tiles this kernel runs. */
  readonly localRanks: readonly number[];
  readonly tilesPerRank: number;
  /**
   * Per phase, the workgroups to dispatch as [x, y] (within the per-dimension limit), in order, all
   * after one clear of the control buffer; [0, 0] for a phase with nothing to run. One phase unless
   * chunks cross devices or are forced to peer-copy.
   */
  readonly phases: readonly (readonly [number, number])[];
  readonly workgroupSize: readonly [number, number];
  readonly tensors: readonly TensorBinding[];
  readonly control: { readonly binding: number; readonly layout: ControlLayout };
  /** Read-only tables: tile orders, phases, chunk descriptors (wgsl/tables.ts). */
  readonly tables: { readonly binding: number; readonly data: Uint32Array };
  /**
   * Read-only `array<vec4<u32>>` views of tensors the kernel only reads (the subgroup-matrix path
   * stages f16 tiles with 16-byte loads through them): bind the tensor's own buffer at `binding`.
   */
  readonly views?: readonly { readonly binding: number; readonly tensor: string }[];
  /** Chunk names in index order (error codes and flags refer to indices). */
  readonly chunkNames: readonly string[];
  /** Parts each chunk is published in, in index order. */
  readonly chunkParts: readonly number[];
  readonly usesF16: boolean;
}

/** The bytes a tensor binding needs for all ranks (f16 rounded up to whole words). */
export function tensorBytes(t: TensorBinding, ranks: number): number {
  const bytes = t.elementsPerRank * ranks * dtypeBytes(t.dtype);
  return Math.ceil(bytes / 4) * 4;
}
