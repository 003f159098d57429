/**
 * Waits inside a loop (ring attention's KV loop) as rows of the tables buffer: per tile and iteration
 * of the loop (the default), or per tile with each entry's loop condition checked in the kernel (the
 * form any loop with bounds that are not constants takes). Both run verified on the software adapter.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeviceHandle } from '@syncopate/runtime';
import { compileOrThrow } from '../src/api/compile.js';
import { lowerToWgsl, openDevice, runWorkload } from '../src/tools/run.js';
import { RING_ATTN_TOLERANCE, ringAttn } from '../src/workloads/ring-attn.js';

describe('in-loop waits, by iteration or by condition', () => {
  let device: DeviceHandle;
  beforeAll(async () => {
    device = await openDevice();
  });
  afterAll(() => device?.close());

  const base = { workload: 'ring-attn', dtype: 'f32', backend: 'auto', order: 'chunk-arrival', seed: 3, timedRuns: 1, timeoutMs: 280_000 } as const;

  it('emits a row per iteration by default, and conditions on request', () => {
    const { kernel, plan } = ringAttn.build({ ranks: 4, shape: { m: 64, n: 16, k: 1 }, dtype: 'f32' });
    const compiled = compileOrThrow(kernel, plan);
    expect(lowerToWgsl(compiled).wgsl).toContain('let wait_iteration = u32(');
    const conditions = lowerToWgsl(compiled, { loopRows: false }).wgsl;
    expect(conditions).not.toContain('wait_iteration');
    expect(conditions).toContain('let wait_g0 = v_j;');
  });

  it.each([true, false])('ring-attn at 4 ranks runs verified with loopRows %s', async (loopRows) => {
    const report = await runWorkload({ ...base, ranks: 4, shape: { m: 64, n: 16, k: 1 }, device, codegen: { loopRows } });
    expect(report.maxAbsError).toBeLessThanOrEqual(RING_ATTN_TOLERANCE);
    expect(report.verified).toBe(true);
  }, 300_000);
});
