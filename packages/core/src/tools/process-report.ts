/**
 * What a run over the processes of an MPI job reports: each figure over every process (the slowest
 * run, the largest error), and the layout of ranks, devices, processes and hosts.
 */
import type { DeviceHandle } from '@syncopate/runtime';
import type { RankProcesses } from '../api/processes.js';

export interface ProcessesReport {
  readonly count: number;
  /** Distinct hosts. */
  readonly hosts: number;
  /** How chunks between processes of one host moved: `cma (process_vm_readv, 8 copy threads)` or `mpi (...)`. */
  readonly sameHostCopy?: string;
  /** Per process, in rank order: its host, and each of its devices with the ranks it ran. */
  readonly layout: readonly {
    readonly process: number;
    readonly host: string;
    readonly devices: readonly { readonly device: number; readonly adapter: string; readonly ranks: readonly number[] }[];
  }[];
}

async function gatherNumbers(group: RankProcesses, values: readonly number[]): Promise<Float64Array[]> {
  const all = await group.allGather(new Uint8Array(Float64Array.from(values).buffer));
  return all.map((b) => new Float64Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength)));
}

/** Every process's `values` (the same count in each), in process order. */
export async function gatherOver(group: RankProcesses, values: readonly number[]): Promise<number[][]> {
  return (await gatherNumbers(group, values)).map((v) => [...v]);
}

/** Per run, the longest of every process's time for it. */
export async function slowestPerRun(group: RankProcesses, times: readonly number[]): Promise<number[]> {
  const all = await gatherNumbers(group, times);
  return times.map((_, i) => Math.max(...all.map((t) => t[i]!)));
}

/** The largest of every process's `value` (NaN if any is NaN). */
export async function worstOver(group: RankProcesses, value: number): Promise<number> {
  const all = (await gatherNumbers(group, [value])).map((v) => v[0]!);
  return all.some(Number.isNaN) ? NaN : Math.max(...all);
}

/** Which process, host and device ran each rank: every process says what it opened. */
export async function processLayout(group: RankProcesses, rankDevice: readonly number[], deviceProcess: readonly number[], devices: readonly (DeviceHandle | undefined)[]): Promise<ProcessesReport> {
  const ours = deviceProcess.flatMap((p, d) => {
    const handle = devices[d] as (DeviceHandle & { placement?: { description: string } }) | undefined;
    return p === group.rank && handle ? [{ device: d, adapter: handle.placement?.description ?? handle.adapterInfo.description, ranks: rankDevice.flatMap((x, r) => (x === d ? [r] : [])) }] : [];
  });
  const all = await group.allGather(new TextEncoder().encode(JSON.stringify(ours)));
  const layout = all.map((bytes, p) => ({ process: p, host: group.hosts[p]!, devices: JSON.parse(new TextDecoder().decode(bytes)) as ProcessesReport['layout'][number]['devices'] }));
  const sameHostCopy = group.sameHostCopy && `${group.sameHostCopy}${group.sameHostCopyReason ? ` (${group.sameHostCopyReason})` : ''}`;
  return { count: group.size, hosts: new Set(group.hosts).size, ...(sameHostCopy && { sameHostCopy }), layout };
}

/** The layout as report rows: `processes  2 on 1 host`, then `  process 1  b: device 1 (GPU 1 ...) ranks 4-7`. */
export function layoutRows(report: ProcessesReport): [string, string][] {
  const span = (ranks: readonly number[]) => (ranks.length > 1 && ranks[ranks.length - 1]! - ranks[0]! === ranks.length - 1 ? `${ranks[0]}-${ranks[ranks.length - 1]}` : ranks.join(','));
  return [
    ['processes', `${report.count} on ${report.hosts} host${report.hosts === 1 ? '' : 's'}`],
    ...report.layout.map((p): [string, string] => [`  process ${p.process}`, `${p.host}: ${p.devices.map((d) => `device ${d.device} (${d.adapter}) ranks ${span(d.ranks)}`).join('; ')}`]),
  ];
}
