/** Diagnostics point at an op (by name and source location) and a value, as MLIR's do. */
import type { OpName, SourceLoc } from './types.js';

export type Severity = 'error' | 'warning' | 'note';

export interface Diagnostic {
  readonly severity: Severity;
  /** Stable machine-readable kind, e.g. `verify/use-before-def`, `parse/expected`, `align/uncovered`. */
  readonly code: string;
  readonly message: string;
  /** The op the diagnostic is about. */
  readonly op?: OpName | 'chunk' | 'tensor' | 'kernel' | 'module';
  /** The value it is about, without the `%`. */
  readonly value?: string;
  readonly loc?: SourceLoc;
  /** The pass that reported it, filled in by the pass manager. */
  readonly pass?: string;
}

export function error(code: string, message: string, where: Omit<Diagnostic, 'severity' | 'code' | 'message'> = {}): Diagnostic {
  return { severity: 'error', code, message, ...where };
}

/** One line: `error[verify/type] 12:5 dot %d: message`. */
export function formatDiagnostic(d: Diagnostic): string {
  const parts = [`${d.severity}[${d.code}]`];
  if (d.pass) parts.push(`(${d.pass})`);
  if (d.loc) parts.push(`${d.loc.line}:${d.loc.column}`);
  if (d.op) parts.push(d.op);
  if (d.value !== undefined) parts.push(`%${d.value}`);
  return `${parts.join(' ')}: ${d.message}`;
}

export function hasErrors(ds: readonly Diagnostic[]): boolean {
  return ds.some((d) => d.severity === 'error');
}
