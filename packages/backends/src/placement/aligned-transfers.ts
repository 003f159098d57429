/**
 * WebGPU copies whole 4-byte words, so an f16 chunk whose run starts or ends at an odd element (an
 * odd row length, an odd row count) cannot be moved as it is. Its run is widened to the words around
 * it: the copy then also carries the neighbouring f16, read from the source device and written into
 * the destination device's copy of the same slot. That is safe only where the extra f16 clobbers
 * nothing the destination reads, so each one is checked:
 *  - its slot is a mailbox on the destination (its owner rank runs elsewhere), never a live rank's;
 *  - and either no other chunk brings that element from its owner to this device (nobody there reads
 *    it), or every chunk that does carries the same bits: both read it from the owner once it no
 *    longer changes, or in one transfer; or the one that brings it is read later, and PlacedSession
 *    writes it after this one (a transfer waits for earlier ones whose bytes it overlaps).
 * Anything else is refused with a TransferAlignmentError naming the chunk and the element, before a
 * device is touched.
 */
import { dtypeBytes, type ChunkDecl, type Module, type Op } from '@syncopate/ir';
import type { TensorBinding } from '../fused-kernel.js';
import type { PhasePlan } from './phases.js';
import { chunkTransfer, type ByteRun, type ChunkTransfer } from './transfers.js';

const WORD = 4;

/** A peer-copy chunk's transfer between devices, its runs widened to whole words. */
export interface PlacedTransfer extends ChunkTransfer {
  /** Source and destination devices. */
  readonly from: number;
  readonly to: number;
  /** The source device's phase after which it is read (−1: at launch) and the destination's that waits for it. */
  readonly comp: number;
  readonly land: number;
}

/** A chunk whose bytes WebGPU cannot copy: an odd f16 edge whose neighbour the destination needs intact. */
export class TransferAlignmentError extends RangeError {
  constructor(
    message: string,
    readonly chunk: string,
  ) {
    super(message);
  }
}

/** What a placement needs for its transfers (PlacedKernels carries all of it). */
export interface TransferPlacement {
  readonly rankDevice: readonly number[];
  readonly phases?: PhasePlan;
  readonly devices: readonly { readonly kernel: { readonly tensors: readonly TensorBinding[] } }[];
}

/** Names of the tensors the kernel stores into. */
function storedTensors(body: readonly Op[], into = new Set<string>()): Set<string> {
  for (const op of body) {
    if (op.op === 'store') into.add(op.tensor);
    else if (op.op === 'for') storedTensors(op.body, into);
  }
  return into;
}

/** The element at flat index `at` of a rank's copy, as coordinates. */
function coordinates(at: number, shape: readonly number[]): number[] {
  const coords = shape.map(() => 0);
  for (let axis = shape.length - 1; axis >= 0; axis--) {
    coords[axis] = at % shape[axis]!;
    at = Math.floor(at / shape[axis]!);
  }
  return coords;
}

const covers = (c: ChunkDecl, coords: readonly number[]) => coords.every((x, i) => x >= c.region.lo[i]! && x < c.region.hi[i]!);

/**
 * The transfer of every chunk that crosses devices in `placed`, by chunk index, each run widened to
 * whole words; throws TransferAlignmentError where a widening could clobber what the destination reads.
 */
export function placedTransfers(module: Module, placed: TransferPlacement): Map<number, PlacedTransfer> {
  const transfers = new Map<number, PlacedTransfer>();
  const plan = placed.phases;
  if (!plan) return transfers;
  const tensors = placed.devices[0]!.kernel.tensors;
  const stored = storedTensors(module.kernel.body);
  const device = placed.rankDevice;
  module.chunks.forEach((c, i) => {
    const [from, to] = [device[c.src]!, device[c.dst]!];
    if (from === to) return;
    const t = tensors.find((x) => x.name === c.tensor)!;
    const exact = chunkTransfer(c, i, t);
    const runs = dtypeBytes(t.dtype) % WORD === 0 ? exact.runs : exact.runs.map((r) => widen(r, (byte) => checkExtra(c, i, t, from, to, byte)));
    transfers.set(i, { ...exact, runs, from, to, comp: plan.comp[i]!, land: plan.land[i]! });
  });
  return transfers;

  /** Throws unless the f16 at byte `byte` of `t`'s buffer can be carried by chunk `i` from device `from` to `to`. */
  function checkExtra(c: ChunkDecl, i: number, t: TensorBinding, from: number, to: number, byte: number): void {
    const element = byte / dtypeBytes(t.dtype);
    const owner = Math.floor(element / t.elementsPerRank);
    if (owner >= module.ranks) return; // the buffer's padding to a whole word: nobody reads it
    const coords = coordinates(element - owner * t.elementsPerRank, t.shape);
    const where = `element [${coords.join(', ')}] of rank ${owner}'s @${t.name}`;
    const refuse = (why: string) => {
      throw new TransferAlignmentError(
        `chunk %${c.value.name} of f16 tensor @${t.name} (rank ${c.src} -> rank ${c.dst}) starts or ends at an odd element, and WebGPU copies whole 4-byte words: ` +
          `carrying the neighbouring ${where} too would ${why}; give @${t.name} an even row length, or place ranks ${c.src} and ${c.dst} on one device`,
        c.value.name,
      );
    };
    if (device[owner] === to) {
      refuse(
        owner === c.src
          ? `overwrite rank ${owner}'s own copy on device ${to}`
          : `overwrite rank ${owner}'s own copy on device ${to}, which starts mid-word (${t.shape.join('·')} = ${t.elementsPerRank} f16 a rank, an odd count)`,
      );
    }
    const readers = module.chunks.flatMap((d, j) => (j !== i && d.tensor === c.tensor && d.src === owner && device[d.dst] === to && covers(d, coords) ? [j] : []));
    if (readers.length === 0) return;
    // Beyond here some chunk j brings the element to this device, read from its owner after phase comp[j].
    if (device[owner] !== from) refuse(`read rank ${owner}'s copy on device ${from}, which is not rank ${owner}'s own`);
    const final = lastWrite(owner, c.tensor, coords);
    const sameTransfer = (j: number) => plan!.comp[j] === plan!.comp[i] && plan!.land[j] === plan!.land[i];
    for (const j of readers) {
      // Both read it once it is final: the same bits. In one transfer: read together, merged.
      if (final <= Math.min(plan!.comp[i]!, plan!.comp[j]!) || sameTransfer(j)) continue;
      // Read here first (maybe before it is final), there later: PlacedSession writes chunk j's
      // transfer after this one's (it waits for transfers whose bytes it overlaps), so j's bits stay.
      if (plan!.comp[i]! < plan!.comp[j]!) continue;
      refuse(`overwrite what chunk %${module.chunks[j]!.value.name} brought earlier with a later value (it changes after phase ${plan!.comp[j]})`);
    }
  }

  /** The phase of `owner`'s device after which element `coords` of its copy of `tensor` no longer changes (−1: never written). */
  function lastWrite(owner: number, tensor: string, coords: readonly number[]): number {
    let last = stored.has(tensor) ? Math.max(-1, ...plan!.tilePhase[owner]!) : -1;
    module.chunks.forEach((d, j) => {
      if (d.tensor === tensor && d.dst === owner && covers(d, coords)) last = Math.max(last, plan!.pub[j]!);
    });
    return last;
  }
}

/** `run` grown to whole words; `check` is called with the byte offset of each f16 added. */
function widen(run: ByteRun, check: (byte: number) => void): ByteRun {
  const start = run.offset - (run.offset % WORD);
  const end = Math.ceil((run.offset + run.bytes) / WORD) * WORD;
  if (start < run.offset) check(start);
  if (end > run.offset + run.bytes) check(run.offset + run.bytes);
  return { offset: start, bytes: end - start };
}
