/**
 * What holds the JS thread during a recorded run: the synchronous WebGPU calls that took long, and the
 * gaps between the thread's turns of the event loop. A transfer's host copy is seen done only on the
 * JS thread, so a copy of 0.2 ms that shows done 10–20 ms late (benchmarks/peer-copy.md) is either a
 * slow call on this thread, or a gap with no slow call in it (Dawn's own event processing, a native
 * callback, garbage collection).
 *
 * watch() wraps the methods of the prototypes of the objects given (once per prototype, for the
 * process's life: the wrapper costs two clock reads a call), and keeps a setImmediate ticker running
 * between start() and stop(). Where /proc is readable (Linux), a worker thread meanwhile samples what
 * the JS thread is doing (/proc/self/task/<pid>/syscall: in user code, or blocked in which system call,
 * an ioctl with its file's name) and keeps each change of state: what a gap was spent in.
 */
import { existsSync } from 'node:fs';
import { PerformanceObserver, constants, type PerformanceEntry } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';

export interface SlowCall {
  readonly name: string;
  /** ms, on performance.now()'s clock */
  readonly at: number;
  readonly ms: number;
}

/** From `at` (ms, performance.now()'s clock) the JS thread was in `state` ('running': user code). */
export interface ThreadState {
  readonly at: number;
  readonly state: string;
}

export interface JsThreadWatch {
  start(): void;
  /** What was seen since start(): calls of at least `callMs`, gaps between turns of at least `gapMs`, garbage collections, the sampled states. */
  stop(): Promise<{ readonly calls: SlowCall[]; readonly gaps: SlowCall[]; readonly collections: SlowCall[]; readonly states: ThreadState[] }>;
  close(): Promise<void>;
}

// The sampler (CommonJS, run by a Worker from this string): flag 0 idle, 1 sample, 2 quit. Each change
// of state is kept with its time on the epoch clock (timeOrigin + now), posted when sampling stops.
const SAMPLER = `
const { workerData, parentPort } = require('node:worker_threads');
const fs = require('node:fs');
const flag = new Int32Array(workerData.flag);
const file = '/proc/self/task/' + workerData.tid + '/syscall';
const names = { 0: 'read', 1: 'write', 7: 'poll', 9: 'mmap', 10: 'mprotect', 11: 'munmap', 16: 'ioctl', 24: 'sched_yield', 28: 'madvise', 202: 'futex', 230: 'clock_nanosleep', 232: 'epoll_wait', 281: 'epoll_pwait' };
const fds = new Map();
const fdName = (fd) => { if (!fds.has(fd)) { let n = '?'; try { n = fs.readlinkSync('/proc/self/fd/' + fd); } catch {} fds.set(fd, n); } return fds.get(fd); };
for (;;) {
  const f = Atomics.load(flag, 0);
  if (f === 2) break;
  if (f === 0) { Atomics.wait(flag, 0, 0); continue; }
  const states = [];
  let last = '';
  while (Atomics.load(flag, 0) === 1) {
    let s;
    try { s = fs.readFileSync(file, 'utf8').trim(); } catch { s = 'unreadable'; }
    const p = s.split(' ');
    const state = s === 'running' ? 'running' : p[0] === '16' ? 'ioctl ' + fdName(parseInt(p[1], 16)) + ' ' + p[2] : (names[p[0]] || 'syscall ' + p[0]);
    if (state !== last) { states.push({ at: performance.timeOrigin + performance.now(), state }); last = state; }
  }
  parentPort.postMessage(states);
}
`;

function startSampler(): { flag: Int32Array; worker: Worker } | undefined {
  if (!existsSync(`/proc/self/task/${process.pid}/syscall`)) return undefined;
  const flag = new Int32Array(new SharedArrayBuffer(4));
  const worker = new Worker(SAMPLER, { eval: true, workerData: { flag: flag.buffer, tid: process.pid } });
  worker.unref();
  return { flag, worker };
}

const GC_KINDS: Record<number, string> = { [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major', [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor', [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental', [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weak callbacks' };

/** A 'gc' performance entry's kind ('major', 'minor', ...), ', forced' added where it was forced. */
export function gcKind(entry: PerformanceEntry): string {
  const detail = (entry as unknown as { detail?: { kind?: number; flags?: number } }).detail ?? {};
  const forced = (detail.flags ?? 0) & constants.NODE_PERFORMANCE_GC_FLAGS_FORCED ? ', forced' : '';
  return `${GC_KINDS[detail.kind ?? 0] ?? `kind ${detail.kind}`}${forced}`;
}

const wrapped = new WeakSet<object>();
let recording: SlowCall[] | undefined;
let minCallMs = 0.5;

function wrapPrototype(label: string, proto: object): void {
  if (wrapped.has(proto)) return;
  wrapped.add(proto);
  for (const key of Object.getOwnPropertyNames(proto)) {
    const descriptor = Object.getOwnPropertyDescriptor(proto, key);
    if (key === 'constructor' || !descriptor || typeof descriptor.value !== 'function') continue;
    const original = descriptor.value as (...args: unknown[]) => unknown;
    Object.defineProperty(proto, key, {
      ...descriptor,
      value: function (this: unknown, ...args: unknown[]) {
        const at = performance.now();
        try {
          return original.apply(this, args);
        } finally {
          const ms = performance.now() - at;
          if (recording && ms >= minCallMs) recording.push({ name: `${label}.${key}`, at, ms });
        }
      },
    });
  }
}

/** Watches the prototypes of `objects` (label → a live object of that class). */
export function watchJsThread(objects: Record<string, object>, options: { callMs?: number; gapMs?: number } = {}): JsThreadWatch {
  for (const [label, object] of Object.entries(objects)) wrapPrototype(label, Object.getPrototypeOf(object) as object);
  const gapMs = options.gapMs ?? 1;
  let gaps: SlowCall[] = [];
  let ticking = false;
  const sampler = startSampler();
  let collections: SlowCall[] = [];
  const gcObserver = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) collections.push({ name: `gc ${gcKind(e)}`, at: e.startTime, ms: e.duration });
  });
  return {
    start() {
      collections = [];
      gcObserver.observe({ entryTypes: ['gc'] });
      if (sampler) {
        Atomics.store(sampler.flag, 0, 1);
        Atomics.notify(sampler.flag, 0);
      }
      minCallMs = options.callMs ?? 0.5;
      recording = [];
      gaps = [];
      ticking = true;
      let last = performance.now();
      const tick = () => {
        const now = performance.now();
        if (now - last >= gapMs) gaps.push({ name: 'gap', at: last, ms: now - last });
        last = now;
        if (ticking) setImmediate(tick);
      };
      setImmediate(tick);
    },
    async stop() {
      ticking = false;
      await new Promise((resolve) => setImmediate(resolve)); // the observer's entries are delivered on a later turn
      gcObserver.disconnect();
      const calls = recording ?? [];
      recording = undefined;
      let states: ThreadState[] = [];
      if (sampler) {
        const posted = new Promise<{ at: number; state: string }[]>((resolve) => sampler.worker.once('message', resolve));
        Atomics.store(sampler.flag, 0, 0);
        states = (await posted).map((s) => ({ at: s.at - performance.timeOrigin, state: s.state }));
      }
      return { calls, gaps, collections, states };
    },
    async close() {
      if (!sampler) return;
      Atomics.store(sampler.flag, 0, 2);
      Atomics.notify(sampler.flag, 0);
      await sampler.worker.terminate();
    },
  };
}
