/**
 * The chunk alignment (`alignChunks`) of a lowered module, computed on its kernel without the waits
 * and arrives that barrier insertion put in. Those ops carry no loads or stores, so the alignment is
 * the same; but the analysis walks the kernel body once per (access site, chunk) pair to find its
 * rank values, and after barrier insertion the body holds a wait per chunk: ag-gemm at 64 ranks
 * spent 6 s of a 9 s `compile --emit wgsl` there. The stripped body is kept per body, so every caller
 * of one module shares one alignment (the analysis memoises by body); a body that barrier insertion
 * made maps back to the one it was given, whose alignment the passes already made.
 */
import type { Module, Op } from '@syncopate/ir';
import { alignChunks, bodyBeforeBarriers, type Alignment } from '@syncopate/passes';

const stripped = new WeakMap<readonly Op[], readonly Op[]>();

function withoutBarriers(ops: readonly Op[]): readonly Op[] {
  // The passes' own body before barrier insertion, when this one came from it: its alignment is made.
  const known = stripped.get(ops) ?? bodyBeforeBarriers(ops);
  if (known) return known;
  const out = ops.flatMap((op): Op[] => (op.op === 'wait' || op.op === 'arrive' ? [] : op.op === 'for' ? [{ ...op, body: withoutBarriers(op.body) }] : [op]));
  stripped.set(ops, out);
  return out;
}

/** The module as the alignment sees it (pass this one to analyses that take the module and a use), and its alignment. */
export function alignedModule(module: Module): { readonly module: Module; readonly alignment: Alignment } {
  const body = withoutBarriers(module.kernel.body);
  const bare = body === module.kernel.body ? module : { ...module, kernel: { ...module.kernel, body } };
  return { module: bare, alignment: alignChunks(bare) };
}
