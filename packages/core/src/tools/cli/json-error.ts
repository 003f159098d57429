/**
 * Where JSON text first goes wrong, as a line and column: `JSON.parse` in Node 20 often says only
 * `Unexpected token '}', "..." is not valid JSON`, which does not say where. A small scanner of the
 * JSON grammar (RFC 8259) finds the first character that cannot continue the text.
 */

export interface JsonSyntaxProblem {
  /** 1-based. */
  readonly line: number;
  /** 1-based, in UTF-16 code units. */
  readonly column: number;
  readonly message: string;
}

class Stop extends Error {
  constructor(
    readonly at: number,
    readonly problem: string,
  ) {
    super(problem);
  }
}

const describe = (text: string, at: number): string => (at >= text.length ? 'end of input' : `'${text[at]}'`);

/** The first syntax error in `text`, or undefined if it is valid JSON. */
export function findJsonSyntaxError(text: string): JsonSyntaxProblem | undefined {
  let at = 0;
  const fail = (expected: string): never => {
    throw new Stop(at, `expected ${expected}, found ${describe(text, at)}`);
  };
  const space = () => {
    while (at < text.length && ' \t\n\r'.includes(text[at]!)) at++;
  };
  const literal = (word: string) => {
    for (const c of word) {
      if (text[at] !== c) fail(`'${word}'`);
      at++;
    }
  };
  const digits = () => {
    if (!/[0-9]/.test(text[at] ?? '')) fail('a digit');
    while (/[0-9]/.test(text[at] ?? '')) at++;
  };
  const number = () => {
    if (text[at] === '-') at++;
    if (text[at] === '0') at++;
    else digits();
    if (text[at] === '.') {
      at++;
      digits();
    }
    if (text[at] === 'e' || text[at] === 'E') {
      at++;
      if (text[at] === '+' || text[at] === '-') at++;
      digits();
    }
  };
  const string = () => {
    at++; // the opening quote
    for (;;) {
      const c = text[at];
      if (c === undefined || c === '\n') fail("a closing '\"'");
      if (c === '"') {
        at++;
        return;
      }
      if (c! < ' ') fail('a character (control characters must be escaped)');
      if (c === '\\') {
        at++;
        const e = text[at];
        if (e === 'u') {
          at++;
          for (let i = 0; i < 4; i++) {
            if (!/[0-9a-fA-F]/.test(text[at] ?? '')) fail('a hex digit');
            at++;
          }
          continue;
        }
        if (e === undefined || !'"\\/bfnrt'.includes(e)) fail('an escape (\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)');
      }
      at++;
    }
  };
  const value = (depth: number): void => {
    if (depth > 512) fail('less nesting');
    space();
    const c = text[at];
    if (c === '{') {
      at++;
      space();
      if (text[at] === '}') {
        at++;
        return;
      }
      for (;;) {
        space();
        if (text[at] !== '"') fail("a property name in '\"'");
        string();
        space();
        if (text[at] !== ':') fail("':'");
        at++;
        value(depth + 1);
        space();
        if (text[at] === ',') {
          at++;
          continue;
        }
        if (text[at] === '}') {
          at++;
          return;
        }
        fail("',' or '}'");
      }
    }
    if (c === '[') {
      at++;
      space();
      if (text[at] === ']') {
        at++;
        return;
      }
      for (;;) {
        value(depth + 1);
        space();
        if (text[at] === ',') {
          at++;
          continue;
        }
        if (text[at] === ']') {
          at++;
          return;
        }
        fail("',' or ']'");
      }
    }
    if (c === '"') return string();
    if (c === '-' || /[0-9]/.test(c ?? '')) return number();
    if (c === 't') return literal('true');
    if (c === 'f') return literal('false');
    if (c === 'n') return literal('null');
    fail('a JSON value');
  };
  try {
    value(0);
    space();
    if (at < text.length) fail('the end of the text');
    return undefined;
  } catch (e) {
    if (!(e instanceof Stop)) throw e;
    const before = text.slice(0, e.at).split('\n');
    return { line: before.length, column: before[before.length - 1]!.length + 1, message: e.problem };
  }
}
