/**
 * GPU fuzz (issue 44): random cases of `syncopate run` (fuzz-cases.ts), each run as the CLI runs it
 * and checked against the CPU reference, bounded in time (fuzz-runner.ts). Each result is appended to
 * `--out` as a JSON line the moment it is known, so a run cut short keeps what it did; the summary
 * table (fuzz-summary.ts) goes to stdout, and to `--summary` if given.
 *
 *   node dist/fuzz.mjs [--cases 500] [--seed 1] [--start 0] [--processes 8 | --shard 0/4] [--out fuzz.jsonl]
 *                      [--summary fuzz.md] [--case-timeout-ms 60000] [--time-limit-s 300] [--max-dim 192]
 *                      [--max-ranks 8] [--devices 1|2] [--workloads ag-gemm,a2a-gemm] [--software] [--case 17]
 *   node dist/fuzz.mjs --summarize a.jsonl [b.jsonl ...]     the table of results already written
 *
 * Two-device cases are drawn where two devices open: two GPUs (one each), or the software adapter
 * (`--software`, or no GPU found), which gives as many devices as asked. `--shard i/n` runs the
 * cases whose index is i mod n, so n processes share a count (each its own devices and JS thread:
 * the CPU reference and shader compiles run beside each other) and together run the same cases as
 * one; `--processes n` starts the n shards itself, all appending to `--out`, and sums them up.
 * `--time-limit-s` starts no case after that many seconds (a bounded call keeps its summary).
 * Exit code 1 if any case failed (wrong, timeout, error).
 */
import { spawn } from 'node:child_process';
import { appendFileSync, existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type { WorkloadName } from '@syncopate/core';
import { listPciGpus, openDevices } from '@syncopate/runtime';
import { DEFAULT_LIMITS, drawCase, type FuzzLimits } from './fuzz-cases.js';
import { failed, FuzzDevices, runCase, type FuzzResult } from './fuzz-runner.js';
import { summaryTable } from './fuzz-summary.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    cases: { type: 'string' },
    seed: { type: 'string' },
    start: { type: 'string' },
    shard: { type: 'string' },
    out: { type: 'string' },
    summary: { type: 'string' },
    'case-timeout-ms': { type: 'string' },
    'time-limit-s': { type: 'string' },
    processes: { type: 'string' },
    'max-dim': { type: 'string' },
    'max-ranks': { type: 'string' },
    devices: { type: 'string' },
    workloads: { type: 'string' },
    software: { type: 'boolean' },
    case: { type: 'string' },
    summarize: { type: 'boolean' },
  },
});

/** Results in JSON-line files (from byte `from` of a single file: what this run appended). */
function readResults(files: readonly string[], from = 0): FuzzResult[] {
  return files.flatMap((f) =>
    readFileSync(f)
      .subarray(from)
      .toString('utf8')
      .split('\n')
      .filter((l) => l.trim().startsWith('{'))
      .map((l) => JSON.parse(l) as FuzzResult),
  );
}

function finish(results: readonly FuzzResult[]): number {
  const table = summaryTable([...results].sort((a, b) => a.index - b.index));
  console.log(table);
  if (values.summary) writeFileSync(values.summary, table + '\n');
  return results.some((r) => failed(r.outcome)) ? 1 : 0;
}

/** `--processes n`: this script again as shards 0/n … n−1/n, then the summary of what they appended. */
async function runShards(n: number): Promise<number> {
  const out = values.out;
  if (!out) throw new Error('fuzz: --processes needs --out (the shards append their results there)');
  const from = existsSync(out) ? statSync(out).size : 0;
  const args = process.argv.slice(2).filter((a, i, all) => a !== '--processes' && all[i - 1] !== '--processes' && a !== '--summary' && all[i - 1] !== '--summary');
  const codes = await Promise.all(
    Array.from({ length: n }, (_, i) =>
      new Promise<number>((resolve) => {
        const child = spawn(process.execPath, [process.argv[1]!, ...args, '--shard', `${i}/${n}`], { stdio: ['ignore', 'ignore', 'inherit'] });
        child.on('exit', (code) => resolve(code ?? 2));
      }),
    ),
  );
  console.error(`fuzz: shards exited ${codes.join(', ')}`);
  return Math.max(finish(readResults([out], from)), ...codes.map((c) => (c === 1 ? 0 : c)));
}

async function main(): Promise<number> {
  if (values.summarize) {
    finish(readResults(positionals));
    return 0;
  }
  if (values.processes !== undefined) return runShards(Number(values.processes));
  const software = values.software || listPciGpus().length === 0;
  const gpus = software ? 0 : listPciGpus().length;
  const maxDevices = Math.min(Number(values.devices ?? 2), software ? 2 : gpus);
  const limits: FuzzLimits = {
    maxDim: Number(values['max-dim'] ?? DEFAULT_LIMITS.maxDim),
    maxRanks: Number(values['max-ranks'] ?? DEFAULT_LIMITS.maxRanks),
    maxDevices,
    workloads: values.workloads ? (values.workloads.split(',') as WorkloadName[]) : DEFAULT_LIMITS.workloads,
  };
  const seed = Number(values.seed ?? 1);
  const timeoutMs = Number(values['case-timeout-ms'] ?? 60_000);
  const [shard, shards] = (values.shard ?? '0/1').split('/').map(Number) as [number, number];
  const first = Number(values.start ?? 0);
  const indices = values.case !== undefined ? [Number(values.case)] : Array.from({ length: Number(values.cases ?? 50) }, (_, i) => first + i).filter((i) => i % shards === shard);
  const devices = new FuzzDevices(() => openDevices(Math.max(1, maxDevices), { ...(software ? { gpus: [] } : {}), device: { requiredLimits: 'adapter-max' } }));
  // A rejection nobody awaited (a run given up on) must not end the fuzz: it is that case's, already counted.
  process.on('unhandledRejection', (e) => console.error(`fuzz: unhandled rejection (after its case was counted): ${e instanceof Error ? e.message : String(e)}`));
  console.error(`fuzz: seed ${seed}, ${indices.length} cases (shard ${shard}/${shards}), ${software ? 'software adapter' : `${gpus} GPUs`}, up to ${maxDevices} devices, ${timeoutMs} ms a case`);
  const deadline = values['time-limit-s'] === undefined ? Infinity : performance.now() + 1000 * Number(values['time-limit-s']);
  const results: FuzzResult[] = [];
  for (const index of indices) {
    if (performance.now() > deadline) {
      console.error(`fuzz: time limit reached after ${results.length} of ${indices.length} cases`);
      break;
    }
    const result = await runCase(drawCase(seed, index, limits), devices, timeoutMs);
    results.push(result);
    if (values.out) appendFileSync(values.out, JSON.stringify({ seed, ...result }) + '\n');
    console.error(`fuzz: #${index} ${result.outcome} ${(result.ms / 1000).toFixed(1)} s  ${result.command}${failed(result.outcome) || result.outcome === 'refused' ? `: ${result.message?.split('\n')[0]}` : ''}`);
  }
  await devices.close();
  return finish(results);
}

main().then(
  (code) => process.exit(code),
  (e) => {
    console.error(e);
    process.exit(2);
  },
);
