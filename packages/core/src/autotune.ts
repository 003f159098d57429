/**
 * The autotuner: for one workload configuration on one adapter, time the fused variant at every
 * candidate tile order and chunk count (each run verified) and keep the fastest. Its key names the
 * adapter, workload, shape, dtype, ranks and devices; the CLI keeps results in a JSON cache on disk
 * (cli/tune-cache.ts: Node only, so this module stays usable in a browser).
 */
import { runWorkload, type RunWorkloadOptions } from './run.js';
import { RUN_ORDERS, type RunOrder } from './workloads/index.js';

export interface TuneCandidate {
  readonly order: RunOrder;
  readonly chunksPerRank: number;
}

export interface TuneTrial extends TuneCandidate {
  /** Median of the timed runs; NaN when it did not verify (and is not a candidate). */
  readonly ms: number;
  readonly verified: boolean;
}

export interface TuneResult {
  readonly key: string;
  readonly best: TuneCandidate & { readonly ms: number };
  readonly trials: readonly TuneTrial[];
  readonly adapter: string;
  readonly date: string;
}

export const DEFAULT_TUNE_ORDERS: readonly RunOrder[] = ['row-major', 'grouped', 'chunk-arrival'];
export const DEFAULT_TUNE_CHUNKS: readonly number[] = [1, 2, 4];

type Configuration = Pick<RunWorkloadOptions, 'workload' | 'shape' | 'dtype' | 'ranks' | 'devices' | 'ranksPerDevice'>;

export function tuneKey(adapter: string, o: Configuration): string {
  const { m, n, k } = o.shape;
  return `${adapter} | ${o.workload} ${m}x${n}x${k} ${o.dtype} ranks=${o.ranks} devices=${o.devices ?? 1} per-device=${o.ranksPerDevice ?? 'auto'}`;
}

export interface TuneOptions extends Omit<RunWorkloadOptions, 'order' | 'chunksPerRank' | 'backend'> {
  readonly orders?: readonly RunOrder[];
  readonly chunksPerRank?: readonly number[];
  readonly onTrial?: (trial: TuneTrial) => void;
}

/** Times every candidate and returns the fastest verified one; throws when none verified. */
export async function tune(o: TuneOptions): Promise<TuneResult> {
  const trials: TuneTrial[] = [];
  let adapter = 'unknown adapter';
  for (const order of o.orders ?? DEFAULT_TUNE_ORDERS) {
    if (!RUN_ORDERS.includes(order)) throw new RangeError(`tune: unknown order '${order}'`);
    for (const chunksPerRank of o.chunksPerRank ?? DEFAULT_TUNE_CHUNKS) {
      const r = await runWorkload({ ...o, order, chunksPerRank, backend: 'auto', timedRuns: o.timedRuns ?? 10, warmupRuns: o.warmupRuns ?? 3 });
      adapter = r.adapter;
      const trial = { order, chunksPerRank, ms: r.verified ? r.fusedMs : NaN, verified: r.verified };
      trials.push(trial);
      o.onTrial?.(trial);
    }
  }
  const best = trials.filter((t) => t.verified).sort((a, b) => a.ms - b.ms)[0];
  if (best === undefined) throw new Error(`tune: no candidate of ${o.workload} matched the CPU reference`);
  return { key: tuneKey(adapter, o), best: { order: best.order, chunksPerRank: best.chunksPerRank, ms: best.ms }, trials, adapter, date: new Date().toISOString() };
}
