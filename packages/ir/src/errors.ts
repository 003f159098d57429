/** Typed errors thrown by the IR's entry points; each carries what went wrong and where. */
import { formatDiagnostic, type Diagnostic } from './diagnostics.js';

/** Base class of every error this project throws on purpose. */
export class SyncopateError extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

/** Malformed textual IR: `line` and `column` are 1-based; `expected` says what the parser wanted. */
export class IRParseError extends SyncopateError {
  constructor(
    readonly line: number,
    readonly column: number,
    readonly expected: string,
    readonly found: string,
  ) {
    super(`${line}:${column}: expected ${expected}, found ${found}`);
  }
}

/** A module that breaks the IR's rules; `diagnostics` name the op and value of each problem. */
export class IRVerifyError extends SyncopateError {
  constructor(readonly diagnostics: readonly Diagnostic[]) {
    super(`invalid IR:\n${diagnostics.map((d) => `  ${formatDiagnostic(d)}`).join('\n')}`);
  }
}

/** Misuse of the builder that the type system could not catch (e.g. an op outside a kernel). */
export class IRBuildError extends SyncopateError {}
