/**
 * When a read-back's map is seen resolved. In recorded two-device runs every piece of a transfer was
 * seen mapped at one moment, ~1 ms after the first was submitted, though a 4 MiB read-back takes
 * ~0.09 ms on the GPU (benchmarks/README.md, 2026-11-26, call 3 of results/gpu2-2026-11-26g). This
 * probe reads back `--pieces` pieces of `--mib` MiB a device, each copied into its own MAP_READ
 * staging buffer, submitted and mapped at once (as the copier does), and records when each piece's
 * map is seen resolved, from the first submit:
 *
 *  - `one`: the pieces on the first device alone;
 *  - `both`: on both devices, the first's submitted first (as a two-way transfer starts);
 *  - `bothCopying`: both, each resolved piece then copied to the host on libuv's pool (the native host
 *    copy, into a plain array), as the copier does;
 *  - `bothBusyJs`: both, the JS thread then busy `--busy-us` a piece (the copier's encoding and submits);
 *  - `onePolled`: the first device alone, with a `setImmediate` loop beside it (is the binding's own
 *    polling of Dawn's events slower than the event loop's turns?).
 *
 * Per case and device, the median over `--runs` runs (after 3 warm-ups) of each piece's time; with
 * one piece alone as the reference (`alone`). One JSON line a case.
 *
 *   node dist/map-latency-probe.mjs [--pieces 8] [--mib 4] [--runs 20] [--busy-us 100]
 */
import { parseArgs } from 'node:util';
import { hostCopier, openDevices, withTimeout } from '@syncopate/runtime';
import { summarize } from './stats.js';

const MiB = 1 << 20;

interface Side {
  readonly device: GPUDevice;
  readonly source: GPUBuffer;
  readonly staging: GPUBuffer[];
  readonly host: Uint8Array[];
}

interface CaseOptions {
  readonly devices: 1 | 2;
  readonly pieces: number;
  readonly copy?: boolean;
  readonly busyUs?: number;
  readonly polled?: boolean;
}

const spin = (us: number) => {
  const until = performance.now() + us / 1000;
  while (performance.now() < until);
};

/** One run: per device, when each piece's map was seen resolved (ms from the first submit). */
async function run(sides: readonly Side[], bytes: number, o: CaseOptions): Promise<number[][]> {
  const copier = hostCopier().copier;
  let polling = o.polled ?? false;
  const poller = (async () => {
    while (polling) await new Promise((r) => setImmediate(r));
  })();
  const start = performance.now();
  const seen = sides.slice(0, o.devices).map((side) =>
    Array.from({ length: o.pieces }, (_, i) => {
      const staging = side.staging[i]!;
      const encoder = side.device.createCommandEncoder();
      encoder.copyBufferToBuffer(side.source, i * bytes, staging, 0, bytes);
      side.device.queue.submit([encoder.finish()]);
      return withTimeout(staging.mapAsync(GPUMapMode.READ), 10_000, 'map-latency-probe', side.device).then(async () => {
        const at = performance.now() - start;
        if (o.copy) await copier.copy(side.host[i]!, new Uint8Array(staging.getMappedRange()));
        if (o.busyUs) spin(o.busyUs);
        return at;
      });
    }),
  );
  const times = await Promise.all(seen.map((pieces) => Promise.all(pieces)));
  polling = false;
  await poller;
  for (const side of sides) for (const s of side.staging) if (s.mapState === 'mapped') s.unmap();
  return times;
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { pieces: { type: 'string' }, mib: { type: 'string' }, runs: { type: 'string' }, 'busy-us': { type: 'string' } } });
  const pieces = Number(values.pieces ?? 8);
  const bytes = Number(values.mib ?? 4) * MiB;
  const runs = Number(values.runs ?? 20);
  const busyUs = Number(values['busy-us'] ?? 100);
  const handles = await openDevices(2, { device: { requiredLimits: 'adapter-max' } });
  try {
    const sides: Side[] = handles.map(({ device }) => {
      const source = device.createBuffer({ size: pieces * bytes, usage: GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST });
      device.queue.writeBuffer(source, 0, new Uint8Array(pieces * bytes).map((_, i) => i * 31));
      const staging = Array.from({ length: pieces }, () => device.createBuffer({ size: bytes, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST }));
      return { device, source, staging, host: Array.from({ length: pieces }, () => new Uint8Array(bytes)) };
    });
    console.log(JSON.stringify({ kind: 'setup', devices: handles.map((h) => h.placement.description), pieces, bytes, hostCopy: hostCopier().copier.kind }));
    const cases: Record<string, CaseOptions> = {
      alone: { devices: 1, pieces: 1 },
      one: { devices: 1, pieces },
      both: { devices: 2, pieces },
      bothCopying: { devices: 2, pieces, copy: true },
      bothBusyJs: { devices: 2, pieces, busyUs },
      onePolled: { devices: 1, pieces, polled: true },
    };
    for (const [name, o] of Object.entries(cases)) {
      const all: number[][][] = [];
      for (let i = 0; i < runs + 3; i++) {
        const times = await run(sides, bytes, o);
        if (i >= 3) all.push(times);
      }
      const perDevice = Array.from({ length: o.devices }, (_, d) => Array.from({ length: o.pieces }, (_, p) => summarize(all.map((t) => t[d]![p]!)).median));
      // How many distinct moments the pieces were seen at (within 20 µs): 1 = all at once.
      const moments = all.map((t) => t.map((ds) => new Set(ds.map((x) => Math.round(x * 50))).size));
      console.log(JSON.stringify({ kind: 'case', case: name, mappedMs: perDevice.map((ps) => ps.map((x) => Number(x.toFixed(3)))), momentsMedian: moments[0]!.map((_, d) => summarize(moments.map((m) => m[d]!)).median) }));
    }
  } finally {
    handles.forEach((h) => h.close());
  }
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? `${e.name}: ${e.message}` : String(e));
  process.exitCode = 1;
});
