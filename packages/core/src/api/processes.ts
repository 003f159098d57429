/**
 * Ranks as processes: a placed kernel's devices spread over the processes of an MPI job, each
 * process opening its own. Every process compiles and places the same plan; each runs the devices it
 * owns, and chunks between processes travel through the group (runtime's ProcessGroup).
 */
import type { ProcessLink } from '@syncopate/runtime';
import { UsageError } from './usage-error.js';

/** What a placed run needs of a process group (runtime's ProcessGroup has it). */
export interface RankProcesses extends ProcessLink {
  /** This process. */
  readonly rank: number;
  readonly size: number;
  /** The host of every process, in rank order. */
  readonly hosts: readonly string[];
  /** This process's index among the processes on its host (which of the host's GPUs it opens). */
  readonly localRank: number;
  allGather(data: Uint8Array): Promise<Uint8Array[]>;
  barrier(): Promise<void>;
  /** How chunks between processes on one host move (runtime's ProcessGroup: 'cma' or 'mpi'), and why. */
  readonly sameHostCopy?: string;
  readonly sameHostCopyReason?: string;
}

/** Which process opens each device of a placed run, and the group that links them. */
export interface ProcessPlacement {
  readonly group: RankProcesses;
  /** Per device of the placed kernels: the process that opens it. */
  readonly deviceProcess: readonly number[];
}

/** A plan that differs between the processes of one job: each would wait for chunks the other never sends. */
export class PlanMismatchError extends UsageError {
  constructor(
    readonly what: string,
    readonly hashes: readonly string[],
  ) {
    const differ = hashes.flatMap((h, p) => (h === hashes[0] ? [] : [p]));
    super(
      `the processes did not all build the same ${what}: process 0 has ${hashes[0]}, ` +
        differ.map((p) => `process ${p} ${hashes[p]}`).join(', ') +
        ': start every process with the same command line, inputs and package versions',
    );
  }
}

/**
 * Devices in blocks over the processes: process p opens devices [p·k, (p+1)·k) with k = devices /
 * processes. Refuses (UsageError) counts that do not divide, before any device is opened.
 */
export function devicesOverProcesses(devices: number, processes: number): number[] {
  if (devices % processes !== 0) {
    throw new UsageError(`${devices} device${devices === 1 ? ' does' : 's do'} not divide over ${processes} processes: ask for a multiple of ${processes} devices (each process opens the same number)`);
  }
  const k = devices / processes;
  return Array.from({ length: devices }, (_, d) => Math.floor(d / k));
}

/** FNV-1a, 64 bits, as hex: the same text gives the same hash in every process (no crypto module needed). */
export function textHash(text: string): string {
  let h = 0xcbf29ce484222325n;
  for (let i = 0; i < text.length; i++) h = BigInt.asUintN(64, (h ^ BigInt(text.charCodeAt(i))) * 0x100000001b3n);
  return h.toString(16).padStart(16, '0');
}

/** Throws PlanMismatchError (in every process) unless every process passed the same `text`. */
export async function checkSamePlan(group: RankProcesses, what: string, text: string): Promise<void> {
  const hashes = (await group.allGather(new TextEncoder().encode(textHash(text)))).map((b) => new TextDecoder().decode(b));
  if (hashes.some((h) => h !== hashes[0])) throw new PlanMismatchError(what, hashes);
}

/** Per group, the placed sessions opened so far: each gets its own range of message tags. */
const sessionsOpened = new WeakMap<RankProcesses, number>();

/** Bits of a tag for the messages within one session; the bits above number the session. */
export const SESSION_TAG_BITS = 20;
/** Sessions numbered before tags wrap (a session this many opens back is long closed). */
const SESSION_TAG_WRAP = 1 << 10;

/** The first tag of the next session opened over `group` (every process opens its sessions in the same order). */
export function nextSessionTag(group: RankProcesses): number {
  const n = sessionsOpened.get(group) ?? 0;
  sessionsOpened.set(group, n + 1);
  return (n % SESSION_TAG_WRAP) << SESSION_TAG_BITS;
}

/**
 * Which process opens each device of a run of `ranks` ranks placed by `rankDevice` on `devices`
 * devices, in blocks (`devicesOverProcesses`). Refuses (UsageError), before any device is opened, a
 * rank or device count that does not divide over the processes.
 */
export function placeProcesses(ranks: number, rankDevice: readonly number[], devices: number, processes: number): number[] {
  if (ranks % processes !== 0) throw new UsageError(`${ranks} ranks do not divide over ${processes} processes: give --ranks a multiple of ${processes}`);
  const deviceProcess = devicesOverProcesses(devices, processes);
  const used = Math.max(...rankDevice) + 1;
  const idle = Array.from({ length: processes }, (_, p) => p).filter((p) => !rankDevice.some((d) => deviceProcess[d] === p));
  if (idle.length > 0) throw new UsageError(`${ranks} ranks on ${devices} devices leave process ${idle.join(', ')} without a rank: give as many ranks per device everywhere`);
  return deviceProcess.slice(0, used);
}
