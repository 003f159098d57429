/**
 * What one recorded run did, in host time (`performance.now()`): each dispatch (with its place on its
 * device's GPU timeline where the adapter has timestamp queries), each peer-copy transfer between
 * devices, and each host wait for chunks to land before a phase. The sessions fill it in as they
 * run; trace.ts turns it into a timeline.
 */
import type { RunResult, TransferStages } from '@syncopate/runtime';

export interface DispatchRecord {
  readonly device: number;
  readonly phase: number;
  /** Host times of its submit and completion; `gpuSpans[0]` where it was timed on the GPU. */
  readonly result: RunResult;
}

export interface TransferRecord extends TransferStages {
  /** Index of the chunk in the module, and its name. */
  readonly chunk: number;
  readonly name: string;
  /** Devices it went from and to. */
  readonly from: number;
  readonly to: number;
  readonly bytes: number;
  /** Contiguous byte runs it was moved as. */
  readonly byteRuns: number;
}

export interface LandingWaitRecord {
  readonly device: number;
  /** The phase the host waited to submit. */
  readonly phase: number;
  /** Chunks (indices) that had to land first. */
  readonly chunks: readonly number[];
  readonly startMs: number;
  readonly endMs: number;
}

export class RunRecording {
  /**
   * @param gpuTimestamps time each dispatch on the GPU too (default true). A timed dispatch takes a
   * query set and two buffers of its own; `false` records the host's clock alone, which leaves the run
   * as the untraced runs go (benchmarks compare variants so).
   */
  constructor(readonly gpuTimestamps = true) {}
  readonly dispatches: DispatchRecord[] = [];
  readonly transfers: TransferRecord[] = [];
  readonly waits: LandingWaitRecord[] = [];
}
