/**
 * `attach-plan`: declares each chunk of the context's plan in the module, as a chunk value the later
 * passes can wait on and arrive at. It checks only what it needs to attach (the plan exists, its ranks
 * match, its tensors exist); whether the plan covers the data without overlap or deadlock is chunk
 * alignment's job, and well-formed regions and ranks are the verifier's.
 */
import * as E from 'fp-ts/lib/Either.js';
import { castDraft } from 'immer';
import { deepFreeze, error, type AffineExpr, type ChunkDecl, type ChunkType, type ChunkSpec, type Diagnostic, type Module, type Op, type Value } from '@syncopate/ir';
import { definePass, editModule, type Pass } from './pass.js';

export const attachPlan: Pass = definePass(
  'attach-plan',
  'declares every chunk of the plan as a chunk value of the module (kind copy and backend auto unless the plan says)',
  (module, ctx) => {
    const { plan } = ctx;
    if (!plan) return E.left([error('plan/missing', 'no chunk plan to attach: compile the kernel with a plan', { op: 'module' })]);
    const problems = planMismatches(module, plan.ranks, plan.chunks);
    if (problems.length > 0) return E.left(problems);
    // One new, frozen list rather than pushes onto the draft's: immer then has one value to finalize,
    // and need not walk the frozen chunks in it.
    const chunks = deepFreeze([...module.chunks, ...declareChunks(module, plan.chunks)]);
    return E.right(
      editModule(module, (draft) => {
        draft.chunks = castDraft(chunks);
      }),
    );
  },
);

function planMismatches(module: Module, ranks: number, chunks: readonly ChunkSpec[]): Diagnostic[] {
  const problems: Diagnostic[] = [];
  if (ranks !== module.ranks) {
    problems.push(error('plan/ranks', `the plan is for ${ranks} ranks but module @${module.name} has ${module.ranks}`, { op: 'module' }));
  }
  const tensors = new Set(module.tensors.map((t) => t.name));
  chunks.forEach((chunk, index) => {
    if (!tensors.has(chunk.tensor)) {
      const known = [...tensors].map((t) => `@${t}`).join(', ');
      problems.push(error('plan/unknown-tensor', `chunk ${index} moves @${chunk.tensor}, which module @${module.name} does not have (it has ${known})`, { op: 'chunk' }));
    }
  });
  return problems;
}

/** Every chunk value's type: one frozen object, rather than one per chunk to freeze. */
const CHUNK_TYPE: ChunkType = Object.freeze({ kind: 'chunk' });

/** Chunk declarations with ids after every id in the module and names `c<i>` that no value has yet. */
function declareChunks(module: Module, chunks: readonly ChunkSpec[]): ChunkDecl[] {
  const values = moduleValues(module);
  const taken = new Set(values.map((v) => v.name));
  let nextId = maxValueId(module) + 1;
  let nextName = 0;
  const freshName = (): string => {
    while (taken.has(`c${nextName}`)) nextName++;
    return `c${nextName++}`;
  };
  return chunks.map((spec) => ({
    value: { id: nextId++, name: freshName(), type: CHUNK_TYPE },
    tensor: spec.tensor,
    // Copied, so the module never shares (and immer never freezes) the caller's plan arrays.
    region: { lo: [...spec.region.lo], hi: [...spec.region.hi] },
    src: spec.src,
    dst: spec.dst,
    step: spec.step,
    kind: spec.kind ?? 'copy',
    backend: spec.backend ?? 'auto',
  }));
}

/** The largest value id defined or used anywhere in `module` (loop bodies included), or -1 if none. */
export function maxValueId(module: Module): number {
  return moduleValues(module).reduce((max, v) => Math.max(max, v.id), -1);
}

/** Every value `module` mentions: chunk values, then each op's results, operands and index terms, in order. */
export function moduleValues(module: Module): Value[] {
  return [...module.chunks.map((c) => c.value), ...module.kernel.body.flatMap(opValues)];
}

function opValues(op: Op): Value[] {
  switch (op.op) {
    case 'rank_id':
    case 'program_id':
    case 'constant':
      return [op.result];
    case 'load':
      return [op.result, ...op.offsets.flatMap(affineValues)];
    case 'gather':
      return [op.result, op.index, ...affineValues(op.column)];
    case 'store':
      return [op.value, ...op.offsets.flatMap(affineValues)];
    case 'dot':
      return [op.result, op.a, op.b, ...(op.acc ? [op.acc] : [])];
    case 'map':
      return [op.result, ...op.operands];
    case 'reduce':
    case 'cast':
      return [op.result, op.value];
    case 'for':
      return [
        ...op.results,
        op.inductionVar,
        ...affineValues(op.lower),
        ...affineValues(op.upper),
        ...op.iterArgs,
        ...op.inits,
        ...op.body.flatMap(opValues),
      ];
    case 'yield':
      return [...op.values];
    case 'wait':
    case 'arrive':
      return [op.chunk, ...(op.guard ?? []).flatMap((condition) => affineValues(condition.expr))];
    default:
      return unreachable(op);
  }
}

function affineValues(e: AffineExpr): Value[] {
  return e.terms.map((t) => t.value);
}

/** Makes a new op kind a type error here until the walk above learns it. */
function unreachable(op: never): never {
  throw new Error(`moduleValues: unknown op ${JSON.stringify(op)}`);
}
