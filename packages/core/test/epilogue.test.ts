// Elementwise epilogues in the generated WGSL: C = relu(A·B + bias) with a broadcast bias row, and a
// cast, run on the software adapter against a CPU loop.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildModule, mul } from '@syncopate/ir';
import type { DeviceHandle } from '@syncopate/runtime';
import { compileOrThrow } from '../src/api/compile.js';
import { lowerToWgsl, openDevice, runFused } from '../src/tools/run.js';

let device: DeviceHandle;
beforeAll(async () => {
  device = await openDevice();
});
afterAll(() => device?.close());

const M = 48;
const N = 40;
const K = 24;

function gemmBiasRelu() {
  return buildModule('gemm_bias_relu', { ranks: 1 }, (mb) => {
    const A = mb.tensor('A', [M, K], 'f32');
    const B = mb.tensor('B', [K, N], 'f32');
    const bias = mb.tensor('bias', [1, N], 'f32');
    const C = mb.tensor('C', [M, N], 'f32');
    mb.kernel('gemm', [Math.ceil(M / 32), Math.ceil(N / 32)], (kb) => {
      const pm = kb.programId(0, 'pm');
      const pn = kb.programId(1, 'pn');
      const [acc] = kb.for(0, K, 8, [kb.zeros([32, 32], 'f32', 'acc')], (k, [acc]) => {
        const a = kb.load(A, [mul(pm, 32), k], [32, 8], 'a');
        const b = kb.load(B, [k, mul(pn, 32)], [8, 32], 'b');
        return [kb.dot(a, b, acc, 'd')];
      });
      const row = kb.load(bias, [0, mul(pn, 32)], [1, 32], 'row');
      const biased = kb.add(acc, row, 'biased');
      const half = kb.constant(0.5, [], 'f32', 'half');
      const scaled = kb.binary('mul', kb.unary('relu', biased, 'relu'), half, 'scaled');
      kb.store(C, [mul(pm, 32), mul(pn, 32)], scaled);
    });
  });
}

describe('epilogues', () => {
  it('relu(A·B + bias) · 0.5 matches the CPU, edge tiles masked', async () => {
    const kernel = gemmBiasRelu();
    const fused = lowerToWgsl(compileOrThrow(kernel, { ranks: 1, chunks: [] }));
    const value = (i: number) => ((i * 7) % 5) - 2;
    const A = Float32Array.from({ length: M * K }, (_, i) => value(i));
    const B = Float32Array.from({ length: K * N }, (_, i) => value(i + 3));
    const bias = Float32Array.from({ length: N }, (_, i) => value(i + 1) * 3);
    const { tensors } = await runFused(device, fused, { A: [A], B: [B], bias: [bias], C: [new Float32Array(M * N)] }, ['C']);
    const C = tensors.C![0]!;
    let worst = 0;
    for (let i = 0; i < M; i++) {
      for (let j = 0; j < N; j++) {
        let s = bias[j]!;
        for (let k = 0; k < K; k++) s += A[i * K + k]! * B[k * N + j]!;
        worst = Math.max(worst, Math.abs(Math.max(s, 0) * 0.5 - C[i * N + j]!));
      }
    }
    expect(worst).toBe(0);
    expect(fused.wgsl).toContain('max(');
  }, 120_000);
});
