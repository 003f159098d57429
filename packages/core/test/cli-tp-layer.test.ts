/**
 * `syncopate run|bench|tune tp-layer`: the command lines read into the runner's options, bad ones
 * refused with exit code 2 before any device opens, and each command run in process on lavapipe at
 * the CLI's default shape (S = 64, H = 64, 4 heads of 16, F = 128, 2 ranks), its output checked.
 * A cold shader cache compiles each kernel at its first dispatch (tens of seconds on a loaded
 * 2-core machine), hence the long timeouts.
 */
import { describe, expect, it } from 'vitest';
import { parseCommandLine } from '../src/tools/cli/args.js';
import { TP_LAYER_DEFAULTS } from '../src/tools/cli/layer-args.js';
import { layerError, TP_LAYER_TOLERANCE } from '../src/layers/check.js';
import { overlapBound, referenceFlop, REFERENCE_MAX_FLOP } from '../src/tools/tp-layer-runner.js';
import { layerCommandRun } from '../src/tools/cli/layer-command.js';
import { cli } from './cli-harness.js';

const COLD_COMPILE_MS = 600_000;

/** The command line as the CLI runs it, with GPU waits long enough for lavapipe's cold compiles. */
async function layerCli(...argv: string[]): Promise<{ code: number; out: string }> {
  const cmd = parseCommandLine(argv);
  if (cmd.kind !== 'layer') throw new Error(`not a layer command: ${argv.join(' ')}`);
  const out: string[] = [];
  const code = await layerCommandRun({ ...cmd, options: { ...cmd.options, timeoutMs: COLD_COMPILE_MS } }, { out: (s) => out.push(s), err: () => {} });
  return { code, out: out.join('\n') };
}

describe('tp-layer command lines', () => {
  it('reads the shape, plan and run options', () => {
    const cmd = parseCommandLine(['run', 'tp-layer', '--seq', '128', '--hidden', '256', '--heads', '8', '--head-dim', '32', '--ffn', '512', '--ranks', '4', '--devices', '2', '--dtype', 'f16', '--chunks-per-rank', '2', '--gather', 'one-shot', '--reduction', 'ring', '--variant', 'sequential', '--check', 'sequential', '--runs', '3', '--warmup', '0', '--seed', '9']);
    expect(cmd).toEqual({
      kind: 'layer',
      action: 'run',
      json: false,
      options: {
        config: { seq: 128, hidden: 256, heads: 8, headDim: 32, ffn: 512, ranks: 4, dtype: 'f16', chunksPerRank: 2, gather: 'one-shot', reduction: 'ring' },
        devices: 2,
        variant: 'sequential',
        check: 'sequential',
        seed: 9,
        runs: 3,
        warmup: 0,
      },
    });
  });

  it('takes the defaults, and a list of chunk counts for tune', () => {
    const run = parseCommandLine(['run', 'tp-layer']);
    expect(run.kind === 'layer' && run.options.config).toEqual({ ...TP_LAYER_DEFAULTS, dtype: 'f32' });
    const tune = parseCommandLine(['tune', 'tp-layer', '--chunks-per-rank', '1,2,4,2']);
    expect(tune.kind === 'layer' && tune.chunkCandidates).toEqual([1, 2, 4]);
  });

  it.each([
    [['run', 'tp-layer', '--m', '64'], 'option --m does not apply to run tp-layer'],
    [['compile', 'tp-layer'], 'tp-layer is a program of ten kernels'],
    [['run', 'tp-layer', '--variant', 'overlapped'], "--variant must be one of fused, sequential, got 'overlapped'"],
    [['run', 'tp-layer', '--chunks-per-rank', '1,2'], '--chunks-per-rank takes one count for run tp-layer'],
    [['tune', 'tp-layer', '--variant', 'fused'], 'option --variant does not apply to tune tp-layer'],
    [['bench', 'tp-layer', '--ranks', '2', '--devices', '3'], '--devices 3 is more than the 2 ranks'],
    [['run', 'tp-layer', '--check', 'cpu'], "--check must be one of auto, reference, sequential, got 'cpu'"],
    [['run', 'tp-layer', '--target', 'tensor-cores'], "--target must be one of auto, simt, subgroup-matrix, simt-attention, got 'tensor-cores'"],
    [['run', 'tp-layer', 'extra'], "unexpected argument 'extra'"],
  ])('refuses %j', async (argv, message) => {
    const { code, err } = await cli(...argv);
    expect(code).toBe(2);
    expect(err).toContain(message);
  });

  it('refuses a shape the layer cannot split before opening a device', async () => {
    const { code, err } = await cli('run', 'tp-layer', '--heads', '3', '--head-dim', '16', '--hidden', '48');
    expect(code).toBe(2);
    expect(err).toContain('heads (3) must be divisible by ranks (R = 2)');
  });
});

describe('the layer check', () => {
  it('measures each rank against its own rows, relative to the largest expected value', () => {
    const e = layerError([Float32Array.of(1, 2), Float32Array.of(-4, 0)], [Float64Array.of(1, 2.5), Float64Array.of(-4, 0)]);
    expect(e).toEqual({ maxAbs: 0.5, scale: 4, relative: 0.125 });
  });

  it('keeps a NaN anywhere, and refuses mismatched ranks', () => {
    expect(layerError([Float32Array.of(NaN, 1)], [Float32Array.of(0, 5)]).relative).toBeNaN();
    expect(() => layerError([Float32Array.of(1)], [])).toThrow(RangeError);
  });

  it('bounds the layer by each GEMM step at the longer of its compute and its collective', () => {
    const steps = {
      fused: { 'rms-norm-1': 1, 'all-gather+qkv': 9, 'out-proj+reduce-scatter': 9, 'all-gather+gate-up': 9, 'down+reduce-scatter': 9 },
      sequential: { 'rms-norm-1': 2, 'all-gather+qkv': 10, 'out-proj+reduce-scatter': 10, 'all-gather+gate-up': 6, 'down+reduce-scatter': 4 },
    };
    // qkv: compute 10 - 3 = 7 > 3; outProj: 10 - 8 = 2 < 8; gateUp: 6 - 1 = 5; down: 4 - 4 = 0 < 4; plus rms-norm as fused ran it.
    expect(overlapBound(steps, { qkv: 3, outProj: 8, gateUp: 1, down: 4 })).toBe(1 + 7 + 8 + 5 + 4);
  });

  it('takes the CPU reference for small layers only', () => {
    expect(referenceFlop({ ...TP_LAYER_DEFAULTS, dtype: 'f32' })).toBeLessThan(REFERENCE_MAX_FLOP);
    expect(referenceFlop({ seq: 4096, hidden: 4096, heads: 32, headDim: 128, ffn: 11008, ranks: 8, dtype: 'f16' })).toBeGreaterThan(REFERENCE_MAX_FLOP);
  });
});

describe('tp-layer on the GPU, as the CLI runs it', () => {
  it('run: the fused layer verified against the CPU reference, then timed', { timeout: COLD_COMPILE_MS }, async () => {
    const { code, out } = await layerCli('run', 'tp-layer', '--runs', '2');
    expect(out).toMatch(/check +verified against the CPU reference: max error \S+ of \S+ \(relative (\S+), tolerance 1\.0e-5\)/);
    expect(out).toMatch(/time +\d+\.\d\d ms \(min \d+\.\d\d, max \d+\.\d\d, 2 runs\)/);
    expect(code).toBe(0);
  });

  it('run --json over two devices, f16, checked against the sequential layer', { timeout: COLD_COMPILE_MS }, async () => {
    // tp-layer.test.ts's shape and ranks: its kernels, already in the shader cache.
    const shape = ['--seq', '16', '--hidden', '32', '--heads', '4', '--head-dim', '8', '--ffn', '64', '--ranks', '4'];
    const { code, out } = await layerCli('run', 'tp-layer', ...shape, '--devices', '2', '--dtype', 'f16', '--check', 'sequential', '--runs', '1', '--json');
    const report = JSON.parse(out);
    expect(report).toMatchObject({ layer: 'tp-layer', variant: 'fused', devices: 2, check: { against: 'sequential', verified: true, tolerance: TP_LAYER_TOLERANCE.f16 } });
    expect(report.check.relative).toBeLessThanOrEqual(TP_LAYER_TOLERANCE.f16);
    expect(report.ms.runs).toBe(1);
    expect(code).toBe(0);
  });

  it('bench: both variants checked against each other and the CPU, with each step timed alone', { timeout: COLD_COMPILE_MS }, async () => {
    const { code, out } = await layerCli('bench', 'tp-layer', '--runs', '1', '--warmup', '0', '--json');
    const report = JSON.parse(out);
    expect(report.verified).toBe(true);
    expect(report.check.vsReference.fused.verified).toBe(true);
    expect(report.check.vsReference.sequential.verified).toBe(true);
    expect(report.fusedOverSequential).toBeCloseTo(report.ms.sequential.median / report.ms.fused.median, 10);
    expect(Object.keys(report.collectiveAloneMs)).toEqual(['qkv', 'outProj', 'gateUp', 'down']);
    expect(report.overlapBoundMs).toBeCloseTo(overlapBound(report.stepsMedianMs, report.collectiveAloneMs), 10);
    expect(report.gemmTarget).toEqual({ fused: 'simt', sequential: 'simt' }); // lavapipe has no subgroup matrices
    expect(report.attentionTarget).toEqual({ fused: 'simt', sequential: 'simt' });
    expect(Object.keys(report.stepsMedianMs.fused)).toEqual(['rms-norm-1', 'all-gather+qkv', 'attention', 'out-proj+reduce-scatter', 'residual-1', 'rms-norm-2', 'all-gather+gate-up', 'swiglu', 'down+reduce-scatter', 'residual-2']);
    expect(code).toBe(0);
  });

  it('tune: every chunk count, gather and reduction checked and timed; the fastest printed as a command', { timeout: COLD_COMPILE_MS }, async () => {
    const { code, out } = await layerCli('tune', 'tp-layer', '--chunks-per-rank', '1', '--runs', '1', '--warmup', '0');
    expect(out.match(/gather (ring|one-shot) +reduction (ring|one-shot) +\d+\.\d\d ms +verified/g)).toHaveLength(4);
    expect(out).toMatch(/best: 1 chunk\(s\) a rank, gather (ring|one-shot), reduction (ring|one-shot): \d+\.\d\dx over sequential/);
    expect(out).toMatch(/syncopate bench tp-layer --seq 64 --hidden 64 --heads 4 --head-dim 16 --ffn 128 --ranks 2 --dtype f32 --devices 1 --chunks-per-rank 1 --gather \S+ --reduction \S+/);
    expect(code).toBe(0);
  });
});
