/**
 * The lexer of the textual IR. It never throws: a character it does not know becomes an `invalid`
 * token, so the parser reports it with what it expected there (one error path, one message shape).
 */

export type TokenKind =
  /** `@name` or `@"any name"`: a module, tensor or kernel; `text` holds the name without `@`. */
  | 'symbol'
  /** `%name` or `%"any name"`: an SSA value; `text` holds the name without `%`. */
  | 'value'
  /** A decimal number such as `64`, `1.5`, `1e-7` (no sign: `-` is its own token). */
  | 'number'
  /** A keyword or other bare word: `load`, `reduce-add`, `f32`, and tile bodies such as `64x32xf32`. */
  | 'word'
  /** `{ } ( ) [ ] < > , : = * + -` and `->`. */
  | 'punct'
  | 'invalid'
  | 'eof';

export interface Token {
  readonly kind: TokenKind;
  readonly text: string;
  /** The token as written (with sigil and quotes), for error messages. */
  readonly raw: string;
  readonly line: number;
  readonly column: number;
}

const PUNCT = new Set(['{', '}', '(', ')', '[', ']', '<', '>', ',', ':', '=', '*', '+', '-']);
const NAME = /[A-Za-z0-9_]+/y;
const QUOTED = /"(?:[^"\\\n]|\\.)*"/y;
const NUMBER = /\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
/** Words may hold inner hyphens (`reduce-add`, `row-major`), never a trailing one. */
const WORD = /[A-Za-z_][A-Za-z0-9_]*(?:-[A-Za-z][A-Za-z0-9_]*)*/y;
const DIGIT_WORD = /[A-Za-z0-9_]+/y;
const WORD_CHAR = /[A-Za-z0-9_]/;

function matchAt(re: RegExp, text: string, pos: number): string | undefined {
  re.lastIndex = pos;
  return re.exec(text)?.[0];
}

/** Reads `"..."` as a JSON string, or undefined when it is malformed. */
function unquote(quoted: string): string | undefined {
  try {
    const s: unknown = JSON.parse(quoted);
    return typeof s === 'string' ? s : undefined;
  } catch {
    return undefined;
  }
}

export function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  let pos = 0;
  let line = 1;
  let lineStart = 0;

  const push = (kind: TokenKind, text: string, raw: string): void => {
    tokens.push({ kind, text, raw, line, column: pos - lineStart + 1 });
    pos += raw.length;
  };

  while (pos < source.length) {
    const ch = source[pos]!;
    if (ch === '\n') {
      pos++;
      line++;
      lineStart = pos;
    } else if (ch === ' ' || ch === '\t' || ch === '\r') {
      pos++;
    } else if (source.startsWith('//', pos)) {
      const end = source.indexOf('\n', pos);
      pos = end < 0 ? source.length : end;
    } else if (ch === '@' || ch === '%') {
      lexSigil(source, pos, ch === '@' ? 'symbol' : 'value', push);
    } else if (source.startsWith('->', pos)) {
      push('punct', '->', '->');
    } else if (PUNCT.has(ch)) {
      push('punct', ch, ch);
    } else if (/\d/.test(ch)) {
      lexDigits(source, pos, push);
    } else {
      const word = matchAt(WORD, source, pos);
      if (word !== undefined) push('word', word, word);
      else push('invalid', ch, ch);
    }
  }
  tokens.push({ kind: 'eof', text: '', raw: '', line, column: pos - lineStart + 1 });
  return tokens;
}

type Push = (kind: TokenKind, text: string, raw: string) => void;

/** `@name`, `%name`, or a quoted name after the sigil; a lone sigil is invalid. */
function lexSigil(source: string, pos: number, kind: 'symbol' | 'value', push: Push): void {
  const sigil = source[pos]!;
  const bare = matchAt(NAME, source, pos + 1);
  if (bare !== undefined) return push(kind, bare, sigil + bare);
  const quoted = matchAt(QUOTED, source, pos + 1);
  const name = quoted === undefined ? undefined : unquote(quoted);
  if (quoted !== undefined && name !== undefined) return push(kind, name, sigil + quoted);
  push('invalid', sigil, sigil);
}

/** A number, unless letters follow it: then one word (`64x32xf32`, the body of a tile type). */
function lexDigits(source: string, pos: number, push: Push): void {
  const num = matchAt(NUMBER, source, pos)!;
  const after = source[pos + num.length];
  if (after !== undefined && WORD_CHAR.test(after)) {
    const word = matchAt(DIGIT_WORD, source, pos)!;
    push('word', word, word);
  } else {
    push('number', num, num);
  }
}

/** How an error message shows a token: quoted as written, or `end of input`. */
export function describeToken(t: Token): string {
  return t.kind === 'eof' ? 'end of input' : `'${t.raw}'`;
}
