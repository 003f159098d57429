/** The error `compileOrThrow` throws. */
import { formatDiagnostic, SyncopateError, type Diagnostic } from '@syncopate/ir';

/** A kernel and plan that did not compile; the message holds one formatted diagnostic per line. */
export class CompileError extends SyncopateError {
  constructor(readonly diagnostics: readonly Diagnostic[]) {
    super(diagnostics.map(formatDiagnostic).join('\n'));
  }
}
