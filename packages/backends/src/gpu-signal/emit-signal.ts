/**
 * The gpu-signal backend in WGSL. Chunk parts are data (see chunk-table.ts, descriptors.ts); the code
 * is generic:
 *  - an `arrive` counts one requirement of each part of its chunk that this tile's stores meet; the
 *    workgroup that counts a part's last requirement queues the part;
 *  - `publish_pending` takes queued parts and publishes each: copies (or, holding the part's lock,
 *    adds) its region from the source rank's copy of the tensor into the destination's, counts it on
 *    its chunk's flag, and counts one requirement of every part that forwards its data, queueing
 *    those that complete; each part is published once, so the loop is bounded by the number of parts;
 *  - a `wait` spins, bounded, until the parts of its chunk the tile reads are published.
 * Waits and arrives are data too: a run of them is one loop over the tile's row of a table
 * (barrier-table.ts), so the code does not grow with the chunks or the ranks.
 * A spin that runs out records the error code, chunk and rank in the control buffer and the workgroup
 * returns; the runtime turns that into a typed error.
 */
import { type Module } from '@syncopate/ir';
import { affineToWgsl } from '../wgsl/affine.js';
import { CONTROL, controlLayout } from '../control.js';
import type { TensorBinding } from '../fused-kernel.js';
import { identifier, wholeWords, type WgslWriter } from '../wgsl/writer.js';
import { maskWords, type BarrierPoint } from './barrier-table.js';
import type { ChunkTable } from './chunk-table.js';
import { DESCRIPTOR_WORDS, FIELD, MAX_DIMS, NO_LOCK } from './descriptors.js';

export interface SignalContext {
  readonly module: Module;
  readonly table: ChunkTable;
  /** Where the chunk descriptors start in the tables buffer. */
  readonly chunksAt: number;
  readonly tensors: ReadonlyMap<string, TensorBinding>;
  readonly name: (valueId: number) => string;
  /** Chunk names never published (fault injection). */
  readonly unpublished: ReadonlySet<string>;
  /** Invocations of a workgroup. */
  readonly workgroupSize: number;
  /** The kernel's runs of waits and arrives (barrier-table.ts), and where each one's rows start in the tables buffer. */
  readonly points: readonly BarrierPoint[];
  readonly pointsAt: readonly number[];
  readonly pointBitsAt: readonly number[];
}

const field = (name: keyof typeof FIELD, offset = 0) => `tables[d + ${FIELD[name] + offset}u]`;

export function emitSignalFunctions(w: WgslWriter, ctx: SignalContext, spinLimit: number): void {
  const parts = ctx.table.parts.length;
  const layout = controlLayout(parts, ctx.table.locks);
  w.line(`const SPIN_LIMIT: u32 = ${spinLimit}u;`);
  w.line(`const PARTS: u32 = ${parts}u;`);
  w.line(`const FLAGS: u32 = ${layout.flags}u;`);
  w.line(`const COUNTERS: u32 = ${layout.counters}u;`);
  w.line(`const LOCKS: u32 = ${layout.locks}u;`);
  w.line(`const PARTS_AT: u32 = ${ctx.chunksAt}u;`);
  w.line(`const DESCRIPTOR_WORDS: u32 = ${DESCRIPTOR_WORDS}u;`);
  w.line(`const NO_LOCK: u32 = ${NO_LOCK}u;`);
  w.line('const NONE: u32 = 0xffffffffu;');
  for (const p of ctx.points) {
    w.line(`const ${pointBase(p)}: u32 = ${ctx.pointsAt[p.index]}u;`);
    if (p.loop) w.line(`const ${pointBase(p)}_BITS: u32 = ${ctx.pointBitsAt[p.index]}u;`);
  }
  w.line();
  w.line('// Parts this workgroup completed and has yet to publish.');
  w.line(`var<workgroup> wg_pending: array<u32, ${wholeWords(ctx.table.maxPending, 4)}>; // the count is wg.pending_count`);
  w.line();
  w.line('// Keeps the first error: its code, chunk and rank.');
  w.block('fn record_error(code: u32, chunk: u32, rank: u32)', () => {
    w.block('for (var attempt = 0u; attempt < 64u; attempt++)', () => {
      w.line(`let r = atomicCompareExchangeWeak(&ctl[${CONTROL.errorCode}], 0u, code);`);
      w.line(`if (r.exchanged) { atomicStore(&ctl[${CONTROL.errorChunk}], chunk); atomicStore(&ctl[${CONTROL.errorRank}], rank); return; }`);
      w.line('if (r.old_value != 0u) { return; }');
    });
  });
  w.line();
  w.line("// 1 once the part is published; 0 after SPIN_LIMIT polls, or as soon as another workgroup failed.");
  w.block('fn spin_flag(part: u32, chunk: u32, rank: u32) -> u32', () => {
    w.line('var pause = 1u;');
    w.line('var noise = part;');
    w.block('for (var i = 0u; i < SPIN_LIMIT; i++)', () => {
      w.line('if (atomicLoad(&ctl[FLAGS + part]) != 0u) { return 1u + (noise & 0u); }');
      w.line(`if (atomicLoad(&ctl[${CONTROL.errorCode}]) != 0u) { return 0u; }`);
      w.line('// Back off between polls (up to 256 steps of arithmetic), so that spinning workgroups leave the');
      w.line("// memory system to the ones moving data; `noise` keeps the compiler from dropping the delay.");
      w.line('for (var b = 0u; b < pause; b++) { noise = noise * 1664525u + 1013904223u; }');
      w.line('pause = min(pause * 2u, 256u);');
    });
    w.line('record_error(1u, chunk, rank);');
    w.line('return 0u;');
  });
  w.line();
  w.block('fn acquire_lock(lock: u32, chunk: u32, rank: u32) -> u32', () => {
    w.block('for (var i = 0u; i < SPIN_LIMIT; i++)', () => {
      w.line('if (atomicCompareExchangeWeak(&ctl[LOCKS + lock], 0u, 1u).exchanged) { return 1u; }');
      w.line(`if (atomicLoad(&ctl[${CONTROL.errorCode}]) != 0u) { return 0u; }`);
    });
    w.line('record_error(2u, chunk, rank);');
    w.line('return 0u;');
  });
  w.line();
  w.line("// Invocation 0 only: n more requirements of a part are met, counted on `lead`, the part's lead (itself");
  w.line('// unless it is a merged reduce-add); queue the lead if that was the last.');
  w.block('fn count_on_lead(lead: u32, n: u32)', () => {
    w.line('let d = PARTS_AT + lead * DESCRIPTOR_WORDS;');
    w.block(`if (atomicAdd(&ctl[COUNTERS + lead], n) + n == ${field('need')})`, () => {
      w.line('wg_pending[wg.pending_count] = lead;');
      w.line('wg.pending_count += 1u;');
    });
  });
  w.line();
  w.line('// Invocation 0 only: one more requirement of `part` is met.');
  w.block('fn count_requirement(part: u32)', () => {
    w.line(`count_on_lead(tables[PARTS_AT + part * DESCRIPTOR_WORDS + ${FIELD.lead}u], 1u);`);
  });
  w.line();
  emitMoveChunk(w, ctx);
  emitPublishPending(w, ctx);
}

/**
 * Elements of a part each invocation moves a round; see emitMoveChunk. 8, not 4: a merged add of eight
 * members then has 64 loads in flight an invocation (gemm-rs f16 at 8 ranks on an H100, one call: fused
 * 1.088 → 0.978 ms); 16 was no faster there and takes lavapipe half again as long to compile (2026-11-26).
 */
const MOVE_UNROLL = 8;
/** Members of a merged reduce-add each round reads before adding. */
const MEMBER_GROUP = 8;

/**
 * The coordinates of a part's element `e` along the tensor's own axes (lanes MAX_DIMS − rank … 3; the
 * others 0). Each lane costs integer divisions per element, so the outermost axis takes no modulo and
 * axes the tensor lacks take nothing. `extents` holds a lane's extent where every part of the tensor
 * has the same one: a literal, which the compiler divides by with multiplies and shifts, not the
 * descriptor's word, which costs a division instruction sequence per element.
 */
function partCoordinates(rank: number, e: string, extents: readonly (number | undefined)[]): string {
  const names = ['x', 'y', 'z', 'w'];
  const extent = (i: number) => (extents[i] === undefined ? `extent.${names[i]}` : `${extents[i]}u`);
  const inner = (i: number) => [...Array(MAX_DIMS - 1 - i).keys()].map((j) => extent(i + 1 + j)).join(' * ');
  const outer = MAX_DIMS - rank;
  const lane = (i: number) => {
    if (i < outer) return '0u';
    const quotient = inner(i) === '' ? e : `${e} / (${inner(i)})`;
    return i === outer ? quotient : `${inner(i) === '' ? e : `(${quotient})`} % ${extent(i)}`;
  };
  return `vec4u(${[0, 1, 2, 3].map(lane).join(', ')})`;
}

/** The regions of the parts on `tensor`. */
const partBoxes = (ctx: SignalContext, tensor: string) => ctx.table.parts.filter((p) => ctx.table.entries[p.chunk]!.chunk.tensor === tensor).map((p) => p.region);

/** Each descriptor lane's extent where all parts on `tensor` share it (see partCoordinates), else undefined. */
function sharedExtents(ctx: SignalContext, tensor: string): (number | undefined)[] {
  const boxes = partBoxes(ctx, tensor);
  const rank = boxes[0]?.lo.length ?? 0;
  return [...Array(MAX_DIMS).keys()].map((lane) => {
    const axis = lane - (MAX_DIMS - rank);
    if (axis < 0) return undefined;
    const sizes = new Set(boxes.map((b) => b.hi[axis]! - b.lo[axis]!));
    return sizes.size === 1 ? [...sizes][0] : undefined;
  });
}

/** Whether every part on `tensor` is whole rounds of `perRound` elements: no lane of a round is past its end. */
function wholeRounds(ctx: SignalContext, tensor: string, perRound: number): boolean {
  return partBoxes(ctx, tensor).every((b) => b.hi.reduce((n, h, i) => n * (h - b.lo[i]!), 1) % perRound === 0);
}

/**
 * Copies or adds one part's region, all invocations taking elements in turn; one case per tensor. A
 * merged lead adds the sources of all its members to the destination, a pass for each MEMBER_GROUP of them.
 *
 * Why rounds of MOVE_UNROLL elements with every load ahead of the adds and stores: a move is memory
 * bound, and an invocation that loads, then stores what it loaded, has one load in flight; with the
 * fused kernels' occupancy (one GEMM workgroup an SM) that held a reduce-scatter on the H100 to about
 * a tenth of HBM bandwidth. A merged lead likewise reads MEMBER_GROUP members a round (a member past
 * the last reads the last again and is not added: every read stays on published data); the members'
 * bases are read once a round, before the loop over elements, not per element.
 */
function emitMoveChunk(w: WgslWriter, ctx: SignalContext): void {
  const tensors = [...new Set(ctx.table.entries.map((e) => e.chunk.tensor))].map((n) => ctx.tensors.get(n)!);
  const maxMembers = ctx.table.parts.reduce((most, p) => Math.max(most, p.members.length), 0);
  const group = Math.min(MEMBER_GROUP, maxMembers);
  const lanes = [...Array(MOVE_UNROLL).keys()];
  w.block('fn move_part(part: u32, lid: u32)', () => {
    w.line('let d = PARTS_AT + part * DESCRIPTOR_WORDS;');
    w.line(`let add = ${field('kind')} == 1u;`);
    w.line(`let src = ${field('src')};`);
    w.line(`let dst = ${field('dst')};`);
    w.line(`let elements = ${field('elements')};`);
    w.line(`let lo = vec4u(${[0, 1, 2, 3].map((i) => field('lo', i)).join(', ')});`);
    w.line(`let extent = vec4u(${[0, 1, 2, 3].map((i) => field('extent', i)).join(', ')});`);
    w.line(`let members = ${field('memberCount')};`);
    if (maxMembers > 0) {
      // The members' source ranks, read once a part: read in the element loop they were two dependent
      // table loads per member and element, the latency chain of every merged add.
      w.line(`var member_src: array<u32, ${maxMembers}>;`);
      w.line(`let member_at = PARTS_AT + ${field('memberStart')};`);
      w.line(`for (var m = 0u; m < members; m++) { member_src[m] = tables[PARTS_AT + tables[member_at + m] * DESCRIPTOR_WORDS + ${FIELD.src}u]; }`);
    }
    w.block(`switch ${field('tensor')}`, () => {
      for (const t of tensors) {
        const ref = identifier('t_', t.name);
        const strides = t.shape.map((_, i) => t.shape.slice(i + 1).reduce((a, b) => a * b, 1));
        // Axes are right-aligned in the descriptor: the tensor's axis i is lane MAX_DIMS - rank + i.
        const offset = (x: string) => strides.map((s, i) => `${x}[${MAX_DIMS - t.shape.length + i}] * ${s}u`).join(' + ');
        const extents = sharedExtents(ctx, t.name);
        w.block(`case ${t.binding}u:`, () => {
          w.line(`let target_base = dst * ${t.elementsPerRank}u;`);
          // Each loop over the part gives every invocation the same elements, so a later round of members
          // rereads only what this invocation stored: no barrier between rounds.
          const whole = wholeRounds(ctx, t.name, MOVE_UNROLL * ctx.workgroupSize);
          const elementLoop = (body: () => void) =>
            w.block(`for (var e0 = lid; e0 < elements; e0 += ${MOVE_UNROLL}u * WORKGROUP_SIZE)`, () => {
              // Unless every part is whole rounds, a lane past the part's end moves element e0 again and
              // does not store it.
              if (!whole) for (const u of lanes.slice(1)) w.line(`let in${u} = e0 + ${u}u * WORKGROUP_SIZE < elements;`);
              for (const u of lanes) {
                if (u > 0) w.line(`let e${u} = ${whole ? `e0 + ${u}u * WORKGROUP_SIZE` : `select(e0, e0 + ${u}u * WORKGROUP_SIZE, in${u})`};`);
                w.line(`let x${u} = lo + ${partCoordinates(t.shape.length, `e${u}`, extents)};`);
                w.line(`let at${u} = ${offset(`x${u}`)};`);
              }
              body();
              for (const u of lanes) w.line(whole || u === 0 ? `${ref}[target_base + at${u}] = v${u};` : `if (in${u}) { ${ref}[target_base + at${u}] = v${u}; }`);
            });
          const single = () => {
            w.line(`let source_base = src * ${t.elementsPerRank}u;`);
            elementLoop(() => {
              for (const u of lanes) w.line(`var v${u} = ${ref}[source_base + at${u}];`);
              w.line(`if (add) { ${lanes.map((u) => `v${u} = ${ref}[target_base + at${u}] + v${u};`).join(' ')} }`);
            });
          };
          if (maxMembers === 0) {
            single();
            return;
          }
          // Each round adds up to MEMBER_GROUP members into the destination.
          w.block('if (members > 0u)', () => {
            w.block(`for (var m = 0u; m < members; m += ${group}u)`, () => {
              for (let j = 0; j < group; j++) w.line(`let base${j} = member_src[${j === 0 ? 'm' : `min(m + ${j}u, members - 1u)`}] * ${t.elementsPerRank}u;`);
              elementLoop(() => {
                for (const u of lanes) w.line(`var v${u} = ${ref}[target_base + at${u}];`);
                for (let j = 0; j < group; j++) w.line(lanes.map((u) => `let v${j}_${u} = ${ref}[base${j} + at${u}];`).join(' '));
                w.line(lanes.map((u) => `v${u} += v0_${u};`).join(' '));
                for (let j = 1; j < group; j++) w.line(`if (m + ${j}u < members) { ${lanes.map((u) => `v${u} += v${j}_${u};`).join(' ')} }`);
              });
            });
          });
          w.block('else', single);
        });
      }
      w.line('default: {}');
    });
  });
  w.line();
}

function emitPublishPending(w: WgslWriter, ctx: SignalContext): void {
  const unpublished = ctx.table.entries.filter((e) => ctx.unpublished.has(e.chunk.value.name)).map((e) => e.index);
  w.line('// Publishes every part this workgroup has queued, and those their publication completes.');
  w.block('fn publish_pending(lid: u32)', () => {
    w.block('for (var n = 0u; n < PARTS; n++)', () => {
      w.line('workgroupBarrier();');
      w.line('if (lid == 0u) { if (wg.pending_count == 0u) { wg.u = NONE; } else { wg.pending_count -= 1u; wg.u = wg_pending[wg.pending_count]; } }');
      w.line('let part = workgroupUniformLoad(&wg.u);');
      w.line('if (part == NONE) { return; }');
      w.line('let d = PARTS_AT + part * DESCRIPTOR_WORDS;');
      w.line(`let chunk = ${field('chunk')};`);
      if (unpublished.length > 0) {
        w.line('// fault injected by CodegenOptions.unpublished: these chunks are never published');
        w.line(`if (${unpublished.map((c) => `chunk == ${c}u`).join(' || ')}) { continue; }`);
      }
      w.line(`let lock = ${field('lock')};`);
      w.block('if (lock != NO_LOCK)', () => {
        w.line('workgroupBarrier();');
        w.line(`if (lid == 0u) { wg.u = acquire_lock(lock, chunk, ${field('src')}); }`);
        w.line('if (workgroupUniformLoad(&wg.u) == 0u) { return; }');
      });
      // Acquire: the part's sources were stored by other workgroups before the counts that queued it
      // (invocation 0's atomics); no invocation may read them before those, as after a wait's spin.
      w.line('storageBarrier();');
      w.line('move_part(part, lid);');
      w.line('storageBarrier();');
      w.block('if (lid == 0u)', () => {
        w.line('if (lock != NO_LOCK) { atomicStore(&ctl[LOCKS + lock], 0u); }');
        w.line('// A merged lead publishes each of its members (itself among them); any other part just itself.');
        w.line(`let members = max(${field('memberCount')}, 1u);`);
        w.block('for (var m = 0u; m < members; m++)', () => {
          w.line(`let q = select(part, tables[PARTS_AT + ${field('memberStart')} + m], ${field('memberCount')} > 0u);`);
          w.line('let dq = PARTS_AT + q * DESCRIPTOR_WORDS;');
          if (unpublished.length > 0) w.line(`if (${unpublished.map((c) => `tables[dq + ${FIELD.chunk}u] == ${c}u`).join(' || ')}) { continue; }`);
          w.line('atomicStore(&ctl[FLAGS + q], 1u);');
          w.line(`for (var i = 0u; i < tables[dq + ${FIELD.depCount}u]; i++) { count_requirement(tables[PARTS_AT + tables[dq + ${FIELD.depStart}u] + i]); }`);
        });
      });
    });
  });
  w.line();
}

/**
 * A phase's first tickets each count one token: a part that is ready at launch, or whose bytes the
 * host put in place before the phase (peer-copy). Counting it may complete the part: then publish it.
 */
export function emitTokenWorkgroups(w: WgslWriter): void {
  w.block('if (local_ticket < tokens)', () => {
    w.line('if (lid == 0u) { wg.pending_count = 0u; count_requirement(tables[tables[row + 2u] + local_ticket]); }');
    w.line('publish_pending(lid);');
    w.line('return;');
  });
}

/** lid 0 runs `poll` (which clears `ok` on a timeout) while the others wait; a timeout ends the workgroup. */
function emitJoinedSpin(w: WgslWriter, poll: () => void): void {
  w.line('workgroupBarrier();');
  w.block('if (lid == 0u)', () => {
    w.line('var ok = 1u;');
    poll();
    w.line('wg.u = ok;');
  });
  w.line('if (workgroupUniformLoad(&wg.u) == 0u) { return; }');
  w.line('storageBarrier();');
}

/** Op comments written out for a point; past these, one line says how many more (the rest is data). */
const COMMENTED_OPS = 4;

/** The name of the constant that holds point `p`'s base in the tables buffer. */
export const pointBase = (p: BarrierPoint) => `${p.kind.toUpperCase()}S_${p.index}`;

/**
 * `// ...` lines for the point: the first ops as the IR prints them (`heading`), then how many more
 * there are and where the tile's entries are.
 */
function pointHeading(w: WgslWriter, point: BarrierPoint, heading: (op: number) => void): void {
  point.ops.slice(0, COMMENTED_OPS).forEach((_, i) => heading(i));
  const more = point.ops.length - COMMENTED_OPS;
  if (more > 0) w.line(`// ... and ${more} more ${point.kind}s, to %${point.ops[point.ops.length - 1]!.chunk.name}`);
  const what = point.kind === 'wait' ? '[chunk, first part, end part)' : '[lead part, requirements]';
  const conditions = point.conditions > 0 ? `, then ${point.conditions} x [slot, lo, hi) of the loop-dependent guard` : '';
  const iv = point.ops[0]!.guard?.flatMap((g) => g.expr.terms).find((t) => t.value.id === point.loop?.iv)?.value.name;
  const row = point.loop ? `row (tile_row, iteration of %${iv ?? 'the loop'}) at ${pointBase(point)}` : `row tile_row at ${pointBase(point)}`;
  w.line(`// This tile's ${point.kind}s: ${row} (gpu-signal/barrier-table.ts), entries ${what}${conditions}`);
}

/** The row of `point` for this tile: `<prefix>_at`, the first word of its entries, and `<prefix>_count`. */
function emitRow(w: WgslWriter, point: BarrierPoint, prefix: string): void {
  w.line(`let ${prefix}_row = ${pointBase(point)} + 2u * tile_row;`);
  w.line(`let ${prefix}_at = tables[${prefix}_row];`);
  w.line(`let ${prefix}_count = tables[${prefix}_row + 1u];`);
}

/** Loops of at most this many iterations keep the bits of their iterations with entries in registers. */
const BITS_IN_REGISTERS = 64;

/** The name of word `k` of the bits of loop `iv`'s iterations where this tile has entries. */
const loopBits = (ctx: SignalContext, iv: number, k: number) => `bits_${ctx.name(iv)}_${k}`;

/**
 * Before a loop that points indexed by its iterations sit in (and has at most BITS_IN_REGISTERS
 * iterations): the iterations where this tile has entries at any of them, a bit each, read once.
 */
export function emitLoopBits(w: WgslWriter, ctx: SignalContext, iv: number): void {
  const points = ctx.points.filter((p) => p.loop?.iv === iv);
  if (points.length === 0 || points[0]!.loop!.iterations > BITS_IN_REGISTERS) return;
  const words = maskWords(points[0]!);
  w.line(`// The iterations of this loop where this tile waits or arrives, a bit each (${points.map(pointBase).join(', ')})`);
  for (let k = 0; k < words; k++) {
    w.line(`let ${loopBits(ctx, iv, k)} = ${points.map((p) => `tables[${pointBase(p)}_BITS + ${words}u * tile_row + ${k}u]`).join(' | ')};`);
  }
}

/**
 * A point indexed by its loop's iterations: unless this iteration's bit is set, a test of a register
 * (or, past BITS_IN_REGISTERS iterations, one word of the table); then `body` on the entries of
 * this tile and iteration (`<prefix>_at`, `<prefix>_count`).
 */
function emitIteration(w: WgslWriter, ctx: SignalContext, point: BarrierPoint, prefix: string, body: () => void): void {
  const loop = point.loop!;
  const iv = ctx.name(loop.iv);
  const offset = loop.lower === 0 ? iv : `(${iv} - ${loop.lower})`;
  const it = `${prefix}_iteration`;
  w.line(`let ${it} = u32(${loop.step === 1 ? offset : `${offset} / ${loop.step}`});`);
  const words = maskWords(point);
  const word =
    loop.iterations > BITS_IN_REGISTERS
      ? `tables[${pointBase(point)}_BITS + ${words}u * tile_row + ${it} / 32u]`
      : words === 1
        ? loopBits(ctx, loop.iv, 0)
        : `select(${loopBits(ctx, loop.iv, 0)}, ${loopBits(ctx, loop.iv, 1)}, ${it} >= 32u)`;
  w.block(`if (((${word} >> (${it} & 31u)) & 1u) != 0u)`, () => {
    w.line(`let ${prefix}_row = ${pointBase(point)} + 2u * (tile_row * ${loop.iterations}u + ${it});`);
    w.line(`let ${prefix}_at = tables[${prefix}_row];`);
    w.line(`let ${prefix}_count = tables[${prefix}_row + 1u];`);
    body();
  });
}

/** The slots' values (the guards' parts in loop variables), computed once per point. */
function emitSlots(w: WgslWriter, ctx: SignalContext, point: BarrierPoint, prefix: string): void {
  point.slots.forEach((s, i) => w.line(`let ${prefix}_g${i} = ${affineToWgsl(s, ctx.name)};`));
}

/** Whether the entry at word `x` holds: all its conditions (none: `true`). */
function entryHolds(point: BarrierPoint, prefix: string, x: string, payload: number): string {
  if (point.conditions === 0) return 'true';
  const slot = (k: number) => {
    if (point.slots.length === 1) return `${prefix}_g0`;
    const word = `tables[${x} + ${payload + 3 * k}u]`;
    return point.slots.slice(1).reduce((acc, _, i) => `select(${acc}, ${prefix}_g${i + 1}, ${word} == ${i + 1}u)`, `${prefix}_g0`);
  };
  const bound = (k: number, j: number) => `bitcast<i32>(tables[${x} + ${payload + 3 * k + j}u])`;
  return [...Array(point.conditions).keys()].map((k) => `(${slot(k)} >= ${bound(k, 1)} && ${slot(k)} < ${bound(k, 2)})`).join(' && ');
}

/** Waits in one pass of an in-loop point share a bitmask word. */
const WAITS_PER_GROUP = 32;

/**
 * A run of waits: the tile's row of the point's table lists the chunks it waits for here and the run
 * of parts of each its reads meet (everything the per-chunk code tested of the rank and the tile is
 * settled in the table); lid 0 spins on each part's flag in turn while the others wait. A tile that
 * waits for one chunk reads its row (two words) and the entry, and spins as before; one that waits
 * for none takes no barrier.
 *
 * Inside a loop, an entry may hold only for some iterations (ring attention's waits, by KV block):
 * up to 32 entries at a time set bits of one word, and a single spin polls those whose bits are set.
 * A part stays published for the rest of a run, so the parts a loop's waits saw published are
 * remembered in `parts_seen` (partsSeenDeclaration, declared before the tile's body): a later
 * iteration that needs only those skips the barriers and the flags' reads. Without it every
 * iteration of ring-attn's KV loop that reads a received block paid a spin's round trip to memory
 * and two barriers (ring-attn's fused kernel on one H100: 1.426 → 1.316 ms). Waits outside loops
 * remember nothing.
 */
export function emitWaitPoint(w: WgslWriter, ctx: SignalContext, point: BarrierPoint, heading: (op: number) => void): void {
  pointHeading(w, point, heading);
  const e = point.entryWords;
  const spin = (x: string, also = '') => {
    w.line(`let wait = vec3u(tables[${x}], tables[${x} + 1u], tables[${x} + 2u]);`);
    w.line(`for (var part = wait.y; ${also}part < wait.z; part++) { if (spin_flag(part, wait.x, rank) == 0u) { ok = 0u; break; } }`);
  };
  w.block('', () => {
    if (!point.inLoop) {
      emitRow(w, point, 'wait');
      emitSlots(w, ctx, point, 'wait');
      w.line(`let wait_end = wait_at + ${e}u * wait_count;`);
      w.block('if (wait_at < wait_end)', () =>
        emitJoinedSpin(w, () =>
          w.block(`for (var x = wait_at; ok == 1u && x < wait_end; x += ${e}u)`, () => {
            const holds = entryHolds(point, 'wait', 'x', 3);
            if (holds === 'true') spin('x');
            else w.block(`if (${holds})`, () => spin('x'));
          }),
        ),
      );
      return;
    }
    const remember = remembersParts(ctx.table);
    const entry = (i: string) => `wait_at + (wait_base + ${i}) * ${e}u`;
    const entries = () =>
      w.block(`for (var wait_base = 0u; wait_base < wait_count; wait_base += ${WAITS_PER_GROUP}u)`, () => {
        w.line(`let wait_n = min(wait_count - wait_base, ${WAITS_PER_GROUP}u);`);
        const holds = entryHolds(point, 'wait', 'x', 3);
        if (holds === 'true') {
          w.line(`var wait_need = select((1u << wait_n) - 1u, 0xffffffffu, wait_n == ${WAITS_PER_GROUP}u);`);
        } else {
          w.line('var wait_need = 0u;');
          w.block('for (var i = 0u; i < wait_n; i++)', () => {
            w.line(`let x = ${entry('i')};`);
            w.line(`if (${holds}) { wait_need |= 1u << i; }`);
          });
        }
        if (remember) {
          w.block('for (var bits = wait_need; bits != 0u; bits &= bits - 1u)', () => {
            w.line('let i = countTrailingZeros(bits);');
            w.line(`let x = ${entry('i')};`);
            w.line('var seen = true;');
            w.line('for (var p = tables[x + 1u]; seen && p < tables[x + 2u]; p++) { seen = (parts_seen[p / 32u] & (1u << (p % 32u))) != 0u; }');
            w.line('if (seen) { wait_need &= ~(1u << i); }');
          });
        }
        w.block('if (wait_need != 0u)', () => {
          emitJoinedSpin(w, () => {
            w.block('for (var bits = wait_need; ok == 1u && bits != 0u; bits &= bits - 1u)', () => {
              w.line(`let x = ${entry('countTrailingZeros(bits)')};`);
              spin('x');
            });
          });
          if (remember) {
            w.line(`for (var bits = wait_need; bits != 0u; bits &= bits - 1u) { let x = ${entry('countTrailingZeros(bits)')}; for (var p = tables[x + 1u]; p < tables[x + 2u]; p++) { parts_seen[p / 32u] |= 1u << (p % 32u); } }`);
          }
        });
      });
    if (point.loop) return emitIteration(w, ctx, point, 'wait', entries);
    emitRow(w, point, 'wait');
    emitSlots(w, ctx, point, 'wait');
    entries();
  });
}

/** The most parts in-loop waits remember (a bit each, in every invocation: 128 bytes); with more they poll every time. */
export const PARTS_SEEN_MAX = 1024;

/** Whether in-loop waits remember published parts for this table (see PARTS_SEEN_MAX). */
export const remembersParts = (table: ChunkTable): boolean => table.parts.length <= PARTS_SEEN_MAX;

/** The words in-loop waits remember published parts in: one bit a part, per invocation (all agree). */
export function partsSeenDeclaration(parts: number): string {
  return `var parts_seen: array<u32, ${Math.max(1, Math.ceil(parts / 32))}>; // parts this workgroup's in-loop waits saw published`;
}

/**
 * A run of arrives: this tile's stores are done; its row lists the parts they complete, each with
 * the part whose counter it counts on (its lead) and how many requirements: on a chunk's source,
 * and a reduce-add's destination (which adds onto its own stores). Merged reduce-adds (the group's
 * parts summed in one pass by its lead) share one destination, whose tile counts once for all of
 * them, as many requirements as members: at 8 ranks sharing a device the owner's tiles made seven
 * counts each, and the arrives cost fused one-shot gemm-rs 0.2 ms of 1.24 (benchmarks/README.md,
 * 2026-11-26, session of 20:31 UTC). The kernel then publishes what completed (`emitPublishPending`).
 */
export function emitArrivePoint(w: WgslWriter, ctx: SignalContext, point: BarrierPoint, heading: (op: number) => void): void {
  pointHeading(w, point, heading);
  const e = point.entryWords;
  const holds = entryHolds(point, 'arrive', 'x', 2);
  const count = 'count_on_lead(tables[x], tables[x + 1u]);';
  const entries = () =>
    w.block('if (arrive_count > 0u)', () => {
      w.line('storageBarrier();');
      w.block('if (lid == 0u)', () => {
        w.line(`for (var x = arrive_at; x < arrive_at + ${e}u * arrive_count; x += ${e}u) { ${holds === 'true' ? count : `if (${holds}) { ${count} }`} }`);
      });
    });
  w.block('', () => {
    if (point.loop) return emitIteration(w, ctx, point, 'arrive', entries);
    emitRow(w, point, 'arrive');
    emitSlots(w, ctx, point, 'arrive');
    entries();
  });
  emitPublishCall(w);
}

export function emitPublishCall(w: WgslWriter): void {
  w.line('publish_pending(lid);');
}
