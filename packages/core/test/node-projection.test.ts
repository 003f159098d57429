/**
 * The cost model over nodes: chunks within a node at the fitted rate, chunks between nodes at the
 * link's, a device's step set by the slower link it uses. The numbers are worked by hand below.
 */
import { describe, expect, it } from 'vitest';
import { placeRanks } from '@syncopate/runtime';
import { nodeGeometry, predict, predictOnNodes, workloadGeometry } from '../src/tools/cost-model.js';
import { projectOnNodes } from '../src/tools/cost-report.js';
import { getWorkload } from '../src/workloads/index.js';

// Intra-node: 0.05 ms a step, 1e6 bytes/ms; between nodes: 0.2 ms a step, 1e5 bytes/ms.
const params = { tileMs: 0.01, latencyMs: 0.05, bytesPerMs: 1e6, dispatchMs: 0.02 };
const slow = { bytesPerMs: 1e5, latencyMs: 0.2 };
// ag-gemm 256x128x64 f32 over 4 ranks: a rank's shard of A is 64 rows x 64 = 16,384 bytes; 8 tiles of 64x64 a rank.
const o = { ranks: 4, shape: { m: 256, n: 128, k: 64 }, dtype: 'f32' as const };
const SHARD = 64 * 64 * 4;
const oneEach = placeRanks(4, 4);
const twoByTwo = { nodes: 2, gpusPerNode: 2 };

describe('the cost model over nodes', () => {
  it('splits each step by link: the ring crosses between nodes at 1 -> 2 and 3 -> 0', () => {
    const ring = getWorkload('ag-gemm').build(o);
    const g = nodeGeometry(ring.kernel, ring.plan, oneEach, twoByTwo);
    const step = [
      { intra: 0, inter: SHARD },
      { intra: SHARD, inter: 0 },
      { intra: 0, inter: SHARD },
      { intra: SHARD, inter: 0 },
    ];
    expect(g.stepLinks).toEqual([step, step, step]);
    // One-shot: device 0 gets rank 1's shard from its node and ranks 2's and 3's from the other.
    const oneShot = getWorkload('ag-gemm').build({ ...o, gather: 'one-shot' });
    expect(nodeGeometry(oneShot.kernel, oneShot.plan, oneEach, twoByTwo).stepLinks[0]![0]).toEqual({ intra: SHARD, inter: 2 * SHARD });
    // Two ranks a device: a chunk within a device arrives within its node.
    expect(nodeGeometry(ring.kernel, ring.plan, placeRanks(4, 2), { nodes: 2, gpusPerNode: 1 }).stepLinks[0]).toEqual([
      { intra: SHARD, inter: SHARD },
      { intra: SHARD, inter: SHARD },
    ]);
  });

  it('times each step by the slower link its busiest device uses, then pipelines as predict does', () => {
    const ring = getWorkload('ag-gemm').build(o);
    const p = predictOnNodes(nodeGeometry(ring.kernel, ring.plan, oneEach, twoByTwo), params, slow);
    // A step: within a node 0.05 + 16384 / 1e6 = 0.066384 ms; between nodes 0.2 + 16384 / 1e5 = 0.36384 ms, which sets it.
    expect(p.commOnly).toBeCloseTo(3 * 0.36384, 9);
    // 8 tiles on each device: 0.08 ms in 4 groups of 0.02; each group after its step lands: 3 x 0.36384 + 0.02.
    expect(p.computeOnly).toBeCloseTo(0.08, 9);
    expect(p.sequential).toBeCloseTo(0.08 + 3 * 0.36384, 9);
    expect(p.fused).toBeCloseTo(3 * 0.36384 + 0.02, 9);
    expect(p.decomposed).toBeCloseTo(3 * 0.36384 + 0.02, 9);
  });

  it('takes the longer of a device\'s two links, not their sum: the fast one hides under the slow one', () => {
    const oneShot = getWorkload('ag-gemm').build({ ...o, gather: 'one-shot' });
    const g = nodeGeometry(oneShot.kernel, oneShot.plan, oneEach, twoByTwo);
    // Device 0: one shard within (0.066384 ms), two between (0.2 + 32768 / 1e5 = 0.52768 ms).
    expect(predictOnNodes(g, params, slow).commOnly).toBeCloseTo(0.52768, 9);
    // A link between nodes faster than the node's own: the shard within the node sets the step.
    expect(predictOnNodes(g, params, { bytesPerMs: 1e8, latencyMs: 0 }).commOnly).toBeCloseTo(0.066384, 9);
  });

  it('is predict on one node, and on two whose link between them is the one within', () => {
    const ring = getWorkload('ag-gemm').build(o);
    const whole = predict(workloadGeometry(ring.kernel, ring.plan, oneEach), params);
    expect(predictOnNodes(nodeGeometry(ring.kernel, ring.plan, oneEach, { nodes: 1, gpusPerNode: 4 }), params, slow)).toEqual(whole);
    const same = predictOnNodes(nodeGeometry(ring.kernel, ring.plan, oneEach, twoByTwo), params, { bytesPerMs: params.bytesPerMs, latencyMs: params.latencyMs });
    for (const key of ['sequential', 'decomposed', 'fused', 'computeOnly', 'commOnly'] as const) expect(same[key]).toBeCloseTo(whole[key], 12);
  });

  it('refuses devices that do not fit on the nodes', () => {
    const ring = getWorkload('ag-gemm').build(o);
    expect(() => nodeGeometry(ring.kernel, ring.plan, oneEach, { nodes: 1, gpusPerNode: 2 })).toThrow(/4 devices do not fit on 1 nodes of 2/);
    expect(() => nodeGeometry(ring.kernel, ring.plan, oneEach, { nodes: 0, gpusPerNode: 4 })).toThrow(RangeError);
  });

  it('projects a run on 2 nodes of 8 with the plan a run over 16 devices takes (gemm-rs: the ring)', () => {
    const config = { params, fusedParams: { ...params, bytesPerMs: 2e6 } };
    const run = { workload: 'gemm-rs' as const, ranks: 16, shape: { m: 256, n: 64, k: 64 }, dtype: 'f32' as const };
    const layout = { nodes: 2, gpusPerNode: 8, interNode: slow };
    const p = projectOnNodes(run, config, layout);
    // A ring reduce-scatter of C [256, 64] f32 over 16: 15 steps, each a 16 x 64 f32 slab (4,096 bytes) a device;
    // the two devices at the nodes' edges receive theirs between nodes: 0.2 + 4096 / 1e5 = 0.24096 ms a step.
    expect(p.commOnly).toBeCloseTo(15 * 0.24096, 9);
    // Fused uses the fused parameters: its steps between nodes are the same, so it differs only within them.
    expect(p.fused).toBeCloseTo(predictOnNodes(nodeGeometry(...built(run, 16), placeRanks(16, 16), layout), config.fusedParams, slow).fused, 12);
    expect(() => projectOnNodes({ ...run, ranks: 8 }, config, layout)).toThrow(/8 ranks fill 8 of the 16 devices/);
  });
});

function built(run: { workload: 'gemm-rs'; ranks: number; shape: { m: number; n: number; k: number }; dtype: 'f32' }, devices: number) {
  const { kernel, plan } = getWorkload(run.workload).build({ ...run, devices });
  expect(plan.name).toMatch(/^ring-reduce-scatter/);
  return [kernel, plan] as const;
}
