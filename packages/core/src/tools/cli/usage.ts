/** The text of `syncopate help`. */
import { defaultPipeline } from '../../api/pipeline.js';
import { WORKLOAD_NAMES, workloads } from '../../workloads/index.js';
import { RUN_BACKENDS, RUN_ORDERS, RUN_TARGETS } from '../run-report.js';
import { DEFAULT_TUNE_CHUNKS, DEFAULT_TUNE_ORDERS } from '../autotune.js';
import { DEFAULT_BENCH_RUNS, DEFAULT_BENCH_WARMUP, DEFAULT_TUNE_RUNS } from './bench-args.js';
import { DEFAULT_SEED, DEFAULT_TIMED_RUNS, EMITS, WARMUP_RUNS } from './args.js';
import { TP_LAYER_DEFAULTS } from './layer-args.js';

export function usage(): string {
  const width = Math.max(...WORKLOAD_NAMES.map((n) => n.length));
  const workloadLines = WORKLOAD_NAMES.map((name) => {
    const w = workloads[name];
    const { m, n, k } = w.defaults;
    return `  ${name.padEnd(width)}  ${w.description}\n  ${''.padEnd(width)}  (default ${m}x${n}x${k}, ${w.defaultRanks} ranks)`;
  });
  return `syncopate: compile and run fused multi-rank WebGPU kernels

usage:
  syncopate compile <workload> [options]   compile the workload; print its IR, plan or WGSL
  syncopate compile --ir FILE [--plan FILE] [options]
                                           compile a kernel written in the textual IR
  syncopate run <workload> [options]       run it on the GPUs and check it against a CPU reference
  syncopate bench <workload|all> [options] time it three ways (sequential, decomposed, fused), each
                                           checked, and its compute alone; print speedups and overlap
  syncopate tune <workload|all> [options]  time the fused kernel at each tile, order and chunk count;
                                           keep the fastest in the tune cache for bench --tuned
  syncopate run|bench|tune tp-layer [options]
                                           the tensor-parallel transformer layer (below)
  syncopate help                           this text (also --help, -h)

workloads:
${workloadLines.join('\n')}

options of compile and run:
  --ranks R                 number of ranks
  --m M --n N --k K         the GEMM's shape: C[M,N] = A[M,K] · B[K,N]
  --dtype f32|f16           element type of A and B (default f32; C is f32)
  --chunks-per-rank C       each rank's shard moves as C chunks (default 1)
  --gather ring|one-shot    ag-gemm, ring-attn: how the sharded input is gathered (default ring;
                            one-shot: every shard from its owner at once, no hop after another)
  --reduction ring|one-shot gemm-rs, gemv-ar: how partial sums are reduced (default one-shot;
                            ring for gemm-rs over several devices)
  --order ORDER             tile order: ${RUN_ORDERS.join(', ')} (default chunk-arrival)

compile:
  --ir FILE                 compile the kernel in FILE (textual IR, docs/ir.md) instead of a workload;
                            the file gives the ranks, shapes, dtypes and any chunks, so only --order
                            of the options above applies
  --plan FILE               a chunk plan in the JSON form (docs/plans.md): replaces the workload's
                            plan; with --ir, its chunks are added to those the file declares
  --emit ${EMITS.join('|').padEnd(18)} what to print (default ir)
  --dump-ir-after PASS|all  also print the IR after these passes (comma-separated) or all of them:
                            ${defaultPipeline().map((p) => p.name).join(', ')}
  --time                    compile ${WARMUP_RUNS} times to warm up, then ${DEFAULT_TIMED_RUNS} times; print the median,
                            p10 and p90 (each pass's median; then the WGSL's, lowered after
                            each compile) instead of the output
  --runs N                  with --time: timed compiles (default ${DEFAULT_TIMED_RUNS})
  --json                    with --time: print the timings as a JSON object
  --dump-wgsl DIR           also write the WGSL (device-0.wgsl) and plan.json (phases, chunks per
                            phase, byte runs) into DIR, creating it
  --target simt|subgroup-matrix
                            how dots lower in that WGSL (default simt); subgroup-matrix (tensor
                            cores, f16 -> f32 at 16x16x16) needs no adapter to compile

run:
  --backend B               comm backend of every chunk: ${RUN_BACKENDS.join(', ')} (default auto)
  --target T                how dots lower: ${RUN_TARGETS.join(', ')} (default auto: subgroup matrices
                            where the device has them for the dtype, f16 on an H100; else SIMT)
  --devices D               place the ranks on D GPU devices (default 1); chunks between devices go
                            through the host (peer-copy), chunks within one stay on the GPU
  --ranks-per-device K      ranks on each device (default: ranks / devices, rounded up)
  --seed S                  seed of the inputs, 0 to 4294967295 (default ${DEFAULT_SEED})
  --verify-rows N           check N output rows spread over the output (every column) against the
                            CPU reference instead of all of it: at GPU shapes the whole reference
                            takes minutes; the report still says verified
  --no-robustness           open the devices without Dawn's bounds checks on shader memory (an
                            out-of-bounds access is undefined; the compiler's kernels guard their
                            edges); the report says which ran
  --json                    print the report as a JSON object
  --dump-wgsl DIR           before running, write each device's WGSL (device-0.wgsl, device-1.wgsl,
                            ...) and plan.json into DIR, creating it
  --trace FILE              after the timed runs, trace one more run into FILE: a Chrome trace
                            (ui.perfetto.dev, chrome://tracing) of each device's dispatches per rank,
                            the transfers between devices and the host's waits for them
  --processes P             the run must be P processes started by mpirun (mpirun -n P syncopate
                            run ...): each opens its block of the --devices (default one each) and
                            runs their ranks; chunks between processes go by MPI (docs/processes.md)

bench (also --ranks, --m --n --k, --dtype, --devices, --ranks-per-device, --seed, --no-robustness, --verify-rows, --processes; a shape option
applies to every workload, which otherwise keeps its defaults):
  --order O1,O2,...         tile orders to compare (default chunk-arrival): a tile-order ablation
  --chunks-per-rank C1,...  chunk counts to compare (default 1): a chunk-size sweep
  --runs N                  timed runs per variant (default ${DEFAULT_BENCH_RUNS})
  --warmup N                untimed runs before them (default ${DEFAULT_BENCH_WARMUP})
  --json                    print the results as JSON ({summary, reports: [{variants, overlap, ...}]})
  --out DIR                 also write bench.json, bench.md and speedup.svg into DIR, with
                            trace.json and timeline.svg of one more fused run
  --trace FILE              the Chrome trace of one more fused run of the first workload
  --tuned                   each workload at the tile, order, chunk count, plan and phasing tune
                            chose (tuned now when the cache has none)

tune (the options of bench but --out, --trace, --tuned): --order and --chunks-per-rank are the
candidates (default ${DEFAULT_TUNE_ORDERS.join(',')} and ${DEFAULT_TUNE_CHUNKS.join(',')}), --runs per candidate
(default ${DEFAULT_TUNE_RUNS}); the cache is $SYNCOPATE_CACHE_DIR/tune.json (default ~/.cache/syncopate)
ag-gemm and gemm-rs tune the GEMM tile too: each tile at the first order and chunk count, then
every order and chunk count at the fastest tile; over more than two ranks, ag-gemm and ring-attn
without --gather, the fastest gathered one-shot too, and gemm-rs and gemv-ar without --reduction,
the fastest with the other reduction too; last, the fastest is timed once more with no
transfer beside compute (sequential phasing: the sequential variant), the two in 4 x --runs
alternating rounds, kept where overlap loses

tp-layer: a Megatron sequence-parallel transformer layer of ten kernels (RMSNorm; all-gather +
QKV GEMM; causal attention; out-projection GEMM + reduce-scatter; residual; RMSNorm; all-gather +
gate/up GEMM; SiLU·up; down GEMM + reduce-scatter; residual), tensors kept on the devices:
  --seq S --hidden H --heads N --head-dim D --ffn F
                            its shape (default S=${TP_LAYER_DEFAULTS.seq} H=${TP_LAYER_DEFAULTS.hidden}, ${TP_LAYER_DEFAULTS.heads} heads of ${TP_LAYER_DEFAULTS.headDim}, F=${TP_LAYER_DEFAULTS.ffn}, ${TP_LAYER_DEFAULTS.ranks} ranks)
  --attention QxKxD         the attention tile: query rows, KV rows, Q·Kᵀ slice (default 16 rows,
                            KV and slice min(32, D); 64x32x16 needs 35 KiB of workgroup memory)
  --target auto|simt|subgroup-matrix|simt-attention
                            how the GEMMs and attention lower (default auto: tensor cores where the
                            devices have them; simt-attention: tensor-core GEMMs, SIMT attention)
  --ranks, --devices, --dtype, --chunks-per-rank, --gather, --reduction (default ring and one-shot),
  --seed, --runs (default 10), --warmup (default 2), --json: as above
  run: --variant fused|sequential (default fused); bench: both, in alternating rounds, with each
  step alone; tune: the fused layer at each chunk count (--chunks-per-rank C1,..., default 1,2,4),
  gather and reduction, printing the fastest as a bench command line
  --check auto|reference|sequential
                            run, bench: check the output against the CPU reference or against the
                            sequential layer (default auto: the reference at up to 2e9 multiply-adds)

exit codes: 0 success; 1 the kernel did not compile (or its IR or plan file is malformed),
            a result was wrong, or another error; 2 bad usage (unknown command, workload or
            option, a bad value, or a file that cannot be read or written)
set SYNCOPATE_DEBUG=1 to see the stack of an unexpected error.`;
}
