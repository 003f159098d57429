/**
 * Where a run over two devices spends its time: each workload's three variants (sequential,
 * decomposed, fused, as the suite runs them), each checked at its timed shape and timed like the
 * suite, then one more run recorded on the host's clock alone (no timestamp queries, so the recorded
 * run goes as the timed ones do). Prints, per variant, when each device submitted each phase and saw
 * it done, and each transfer's stages (started, first source piece mapped, copies into place
 * submitted), in ms from the run's start; writes the Chrome traces, one file per workload.
 *
 *   node dist/placed-timeline.mjs [--only embed-a2a,gemv-ar] [--dtype f32] [--size 4096] [--ranks 4] [--runs 5]
 *                                 [copier flags] [--gpu-timestamps] [--fused-sequential] [--comm-only] [--busy-ms MS] [--watch-js-thread] [--out DIR]
 *
 * The copier flags (copier-args.ts: --ring, --read-ahead, --beside-compute, --min-piece-kib, ...) set the host copier's options; the
 * trace files then carry them in their names. --gpu-timestamps draws each phase as the GPU timed it
 * (a query set per dispatch, which slows the recorded run; the host's clock alone otherwise).
 * --fused-sequential adds a fourth variant: the fused kernel (chunks within a device inside it) with
 * the sequential variant's phasing (no cut for the chunks between devices): what the cuts cost or gain.
 * --comm-only also records, before the sequential and the fused variant's own recorded run, their
 * communication alone (the suite's comm-only columns: the tile phases not launched), in the same session.
 * --busy-ms keeps both GPUs busy (burnGpus) that long right before the recorded run, so that it runs at
 * the clocks of the suite's rounds, not at those an idle GPU drops to. --watch-js-thread prints, for
 * the recorded run, the WebGPU calls that held the JS thread 0.5 ms or more, the gaps of 1 ms or more
 * between its turns, the garbage collections and what the thread was doing in each gap of 3 ms or more
 * (js-thread-watch.ts), in ms from the recorded run's mark; and writes the process's maps.txt (where
 * its libraries lay, for a `node --prof` log of the same process).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { COPIER_FLAGS, copierOptions, copierTag } from './copier-args.js';
import { BENCH_VARIANTS, burnGpus, traceRun, traceSession, VARIANT_OPTIONS, type ChromeTrace, type FusedSession, type PlacedSession, type TraceSubject, type WorkloadName } from '@syncopate/core';
import { openDevices } from '@syncopate/runtime';
import { watchJsThread, type SlowCall, type ThreadState } from './js-thread-watch.js';
import { gpuShape } from './suite-shapes.js';

/** The sampled states of the JS thread between two times, each with its share of that span (ms). */
function statesWithin(states: readonly ThreadState[], from: number, to: number): string {
  const spent = new Map<string, number>();
  states.forEach((s, i) => {
    const end = Math.min(to, states[i + 1]?.at ?? to);
    const begin = Math.max(from, s.at);
    if (end > begin) spent.set(s.state, (spent.get(s.state) ?? 0) + end - begin);
  });
  return [...spent].sort((a, b) => b[1] - a[1]).map(([state, ms]) => `${state} ${ms.toFixed(2)}`).join(', ') || 'no samples';
}

/** A live object of each WebGPU class whose calls the JS thread makes in a run. */
function webgpuObjects(device: GPUDevice): Record<string, object> {
  const encoder = device.createCommandEncoder();
  const pass = encoder.beginComputePass();
  pass.end();
  const buffer = device.createBuffer({ size: 4, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  const objects = { GPUDevice: device, GPUQueue: device.queue, GPUCommandEncoder: encoder, GPUComputePassEncoder: pass, GPUCommandBuffer: encoder.finish(), GPUBuffer: buffer };
  buffer.destroy();
  return objects;
}

/** The timeline of one trace as lines of text: phases per device, then transfers, by start. */
function timelineLines(trace: ChromeTrace): string[] {
  const spans = trace.traceEvents.filter((e) => e.ph === 'X');
  const origin = Math.min(...spans.map((e) => e.ts!));
  const ms = (us: number) => ((us - origin) / 1000).toFixed(3);
  const shown = new Set<string>();
  return spans
    .filter((e) => e.name.startsWith('phase') || e.cat === 'peer-copy' || e.name.startsWith('wait'))
    .filter((e, i, all) => all.findIndex((f) => f.pid === e.pid && f.name === e.name && f.ts === e.ts) === i) // a phase is drawn on each rank's track
    .sort((a, b) => a.ts! - b.ts!)
    .map((e) => {
      const a = (e.args ?? {}) as Record<string, unknown>;
      const stages = e.cat === 'peer-copy' ? ` mapped +${a['sourceMappedAfterMs']} submitted +${a['submittedAfterMs']} (${a['bytes']} B, device ${a['fromDevice']} -> ${a['toDevice']})` : '';
      // A transfer's pieces once (its chunks share them): started/read-back mapped/staging mapped/copied/submitted.
      const pieces = e.cat === 'peer-copy' && !shown.has(`${e.pid} ${e.ts}`) ? `\n      pieces ${(a['pieces'] as number[][]).map((p) => p.join('/')).join('  ')}` : '';
      shown.add(`${e.pid} ${e.ts}`);
      return `  device ${e.pid} ${e.name.padEnd(22)} ${ms(e.ts!).padStart(8)} – ${ms(e.ts! + e.dur!).padStart(8)}${stages}${pieces}`;
    });
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { only: { type: 'string' }, dtype: { type: 'string' }, size: { type: 'string' }, ranks: { type: 'string' }, out: { type: 'string' }, runs: { type: 'string' }, ...COPIER_FLAGS, 'gpu-timestamps': { type: 'boolean' }, 'fused-sequential': { type: 'boolean' }, 'comm-only': { type: 'boolean' }, 'busy-ms': { type: 'string' }, 'watch-js-thread': { type: 'boolean' } } });
  const out = values.out ?? process.env['OUT'] ?? '.';
  const names = (values.only ?? 'embed-a2a,gemv-ar,ring-attn').split(',') as WorkloadName[];
  const dtype = values.dtype === 'f16' ? 'f16' : 'f32';
  const size = Number(values.size ?? 4096);
  const ranks = Number(values.ranks ?? 4);
  const runs = Number(values.runs ?? 5);
  const busyMs = Number(values['busy-ms'] ?? 0);
  const peerCopy = copierOptions(values);
  const tag = copierTag(values);
  const devices = await openDevices(2, { device: { requiredLimits: 'adapter-max' } });
  const watch = values['watch-js-thread'] ? watchJsThread(webgpuObjects(devices[0]!.device)) : undefined;
  try {
    for (const workload of names) {
      const traces: Record<string, ChromeTrace> = {};
      const variants = [...BENCH_VARIANTS.map((v) => [v, VARIANT_OPTIONS[v]] as const), ...(values['fused-sequential'] ? [['fused-sequential', { backend: 'auto', phasing: 'sequential' }] as const] : [])];
      for (const [variant, { backend, phasing }] of variants) {
        let mark = 0;
        const beforeRecordedRun = async (session: FusedSession | PlacedSession, subject: TraceSubject) => {
          if (values['comm-only'] && (variant === 'sequential' || variant === 'fused')) {
            // Its communication alone first, as the suite times it (the comm-only column), in the same session.
            await burnGpus(devices.map((d) => d.device), busyMs);
            const alone = await traceSession(session, subject, values['gpu-timestamps'] ?? false, true);
            traces[`${variant}-comm`] = alone;
            console.log(`${workload}${tag} ${variant}, communication alone: recorded run:`);
            console.log(timelineLines(alone).join('\n'));
          }
          await burnGpus(devices.map((d) => d.device), busyMs);
          mark = performance.now();
          // On the process's clock, as node --trace-gc stamps its lines: a pause within the recorded run shows.
          console.log(`${workload} ${variant}: recorded run from ${mark.toFixed(1)} ms (epoch ${(performance.timeOrigin + mark).toFixed(1)} ms)`);
          watch?.start();
        };
        const { report, trace } = await traceRun(
          { workload, ranks, dtype, shape: gpuShape(workload, ranks, size), order: 'chunk-arrival', seed: 1, backend, codegen: { phasing }, handles: devices, devices: 2, peerCopy, verifyRows: 16, timedRuns: runs, warmupRuns: 5, afterTimedRuns: beforeRecordedRun },
          values['gpu-timestamps'] ?? false,
        );
        traces[variant] = trace;
        console.log(`${workload}${tag} ${variant}: median ${report.timings.median.toFixed(3)} ms (min ${report.timings.min.toFixed(3)}), verified ${report.verified}, phases ${report.phases.join('/')}, recorded run:`);
        console.log(timelineLines(trace).join('\n'));
        if (watch) {
          const { calls, gaps, collections, states } = await watch.stop();
          const line = (c: SlowCall) => `${c.name} ${(c.at - mark).toFixed(3)} +${c.ms.toFixed(3)}`;
          console.log(`  js thread, ms from the mark: slow calls ${calls.map(line).join(', ') || 'none'}\n  gaps between turns ${gaps.map(line).join(', ') || 'none'}\n  collections ${collections.map(line).join(', ') || 'none'}`);
          for (const gap of gaps.filter((g) => g.ms >= 3)) console.log(`  in the gap at ${(gap.at - mark).toFixed(3)}: ${statesWithin(states, gap.at, gap.at + gap.ms)}`);
        }
      }
      writeFileSync(join(out, `timeline-${workload}${tag}.json`), JSON.stringify(traces));
    }
    if (watch) {
      // For a --prof log of this process: where each library lay (ticks in libraries loaded after start), and V8's start on performance.now()'s clock.
      writeFileSync(join(out, 'maps.txt'), readFileSync('/proc/self/maps', 'utf8'));
      console.log(`v8 started at ${performance.nodeTiming.v8Start.toFixed(3)} ms (performance.now())`);
    }
  } finally {
    await watch?.close();
    devices.forEach((d) => d.close());
  }
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? `${e.name}: ${e.message}` : String(e));
  process.exitCode = 1;
});
