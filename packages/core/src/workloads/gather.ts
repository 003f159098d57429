/** The all-gather a workload's options name (`WorkloadOptions.gather`): ag-gemm's A, ring-attn's K and V. */
import { oneShotAllGather, ringAllGather } from '@syncopate/passes';
import { UsageError } from './errors.js';
import { COLLECTIVE_PLANS, type WorkloadOptions } from './types.js';

/** The template `o.gather` names (the ring unless told). */
export function gatherTemplate(o: WorkloadOptions): typeof ringAllGather {
  const gather = o.gather ?? 'ring';
  if (!COLLECTIVE_PLANS.includes(gather)) throw new UsageError(`gather must be 'ring' or 'one-shot', got ${String(gather)}`);
  return gather === 'ring' ? ringAllGather : oneShotAllGather;
}
