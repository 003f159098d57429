import type { Op } from '@syncopate/ir';

/** Visits every op of `ops` in order, the body of a `for` right after the loop itself. */
export function walkOps(ops: readonly Op[], visit: (op: Op) => void): void {
  for (const op of ops) {
    visit(op);
    if (op.op === 'for') walkOps(op.body, visit);
  }
}
