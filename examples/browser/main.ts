/**
 * The browser example: compile ag-gemm with the same packages Node uses, then run it on
 * `navigator.gpu` and show the report `syncopate run` prints. What happened is also left on
 * `window.__syncopate` for the end-to-end test (e2e.mjs).
 */
import {
  alignedTable,
  compileOrThrow,
  formatTimings,
  getWorkload,
  lowerToWgsl,
  print,
  runReportRows,
  runWorkload,
  RUN_ORDERS,
  type RunOrder,
  type RunReport,
  type WorkloadOptions,
} from '@syncopate/core';

export interface CompileSummary {
  readonly pipeline: string;
  readonly irLines: number;
  readonly wgslBytes: number;
  readonly compileMs: number;
}

export interface PageResult {
  state: 'compiling' | 'compiled' | 'running' | 'done' | 'no-webgpu' | 'error';
  options?: { ranks: number; m: number; n: number; k: number; order: RunOrder; seed: number };
  compile?: CompileSummary;
  report?: RunReport;
  /** The report as `syncopate run` prints it. */
  reportText?: string;
  error?: string;
}

declare global {
  interface Window {
    __syncopate: PageResult;
  }
}

const result: PageResult = { state: 'compiling' };
window.__syncopate = result;

const $ = (id: string) => document.getElementById(id)!;
const setStatus = (text: string, cls = '') => {
  $('status').textContent = text;
  $('status').className = cls;
};

function fillTable(id: string, rows: readonly (readonly [string, string])[]) {
  $(id).replaceChildren(
    ...rows.map(([label, value]) => {
      const tr = document.createElement('tr');
      for (const text of [label, value]) {
        const td = document.createElement('td');
        td.textContent = text;
        if (label === 'verified' && text === value) td.className = value === 'yes' ? 'good' : 'bad';
        tr.append(td);
      }
      return tr;
    }),
  );
}

function readOptions() {
  const q = new URLSearchParams(location.search);
  const workload = getWorkload('ag-gemm');
  const int = (name: string, fallback: number) => {
    const v = q.get(name);
    return v === null ? fallback : Number.parseInt(v, 10);
  };
  const order = (q.get('order') ?? 'chunk-arrival') as RunOrder;
  if (!RUN_ORDERS.includes(order)) throw new Error(`unknown order '${order}'; known: ${RUN_ORDERS.join(', ')}`);
  return {
    ranks: int('ranks', workload.defaultRanks),
    m: int('m', workload.defaults.m),
    n: int('n', workload.defaults.n),
    k: int('k', workload.defaults.k),
    order,
    seed: int('seed', 1),
    run: q.get('run') !== '0',
  };
}

async function main() {
  const { run, ...options } = readOptions();
  result.options = options;
  const { ranks, m, n, k, order, seed } = options;

  // 1. Compile in the page: passes, then WGSL codegen. Needs no GPU.
  const workload = getWorkload('ag-gemm');
  const wo: WorkloadOptions = { ranks, shape: { m, n, k }, dtype: 'f32' };
  const t0 = performance.now();
  const { kernel, plan } = workload.build(wo);
  const compiled = compileOrThrow(kernel, plan, { passOptions: { 'reorder-tiles': { order } } });
  const fused = lowerToWgsl(compiled);
  const compileMs = performance.now() - t0;
  const ir = print(compiled.module);
  result.compile = {
    pipeline: compiled.pipeline,
    irLines: ir.split('\n').length,
    wgslBytes: new TextEncoder().encode(fused.wgsl).length,
    compileMs,
  };
  fillTable('compile', [
    ['pipeline', compiled.pipeline],
    ['IR', `${result.compile.irLines} lines`],
    ['WGSL', `${result.compile.wgslBytes} bytes, entry point ${fused.entryPoint}`],
    ['compile + codegen', `${compileMs.toFixed(1)} ms`],
    ['passes', formatTimings(compiled.timings).replace(/\n/g, '; ')],
  ]);
  $('ir').textContent = ir;
  $('wgsl').textContent = fused.wgsl;
  result.state = 'compiled';

  if (!run) {
    setStatus('Compiled (run=0: not run).');
    return;
  }
  if (!('gpu' in navigator) || navigator.gpu === undefined) {
    result.state = 'no-webgpu';
    setStatus('Compiled. This browser has no WebGPU (navigator.gpu), so the kernel was not run.', 'bad');
    return;
  }

  // 2. Run on navigator.gpu and check against the CPU reference.
  result.state = 'running';
  setStatus(`Running ag-gemm ${m}x${n}x${k} over ${ranks} ranks on navigator.gpu…`);
  const report = await runWorkload({ workload: 'ag-gemm', ranks, shape: { m, n, k }, dtype: 'f32', order, backend: 'auto', seed });
  result.report = report;
  result.reportText = alignedTable(runReportRows(report));
  fillTable('report', runReportRows(report));
  $('report-text').textContent = result.reportText;
  result.state = 'done';
  setStatus(report.verified ? 'Done: verified against the CPU reference.' : 'Done: the result differs from the CPU reference.', report.verified ? 'good' : 'bad');
}

main().catch((e: unknown) => {
  result.state = 'error';
  result.error = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
  setStatus(`Error: ${result.error}`, 'bad');
  console.error(e);
});
