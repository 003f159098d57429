/**
 * Pass options: each pass declares the fields it reads from `ctx.options[<its name>]`, and the pass
 * manager checks every option against those declarations before the first pass runs, so a misspelt
 * pass name, field or value is a diagnostic instead of a setting silently ignored. `PassOptions` is
 * the same check for TypeScript callers, at compile time.
 */
import { error, type Diagnostic } from '@syncopate/ir';
import type { AlignOptions } from './align-chunks.js';
import type { Pass } from './pass.js';
import type { ReorderOptions } from './reorder-tiles.js';

/**
 * The options of the built-in passes, keyed by pass name, as `compile`'s `passOptions` takes them.
 * An interface, so a custom pass can add its own key by module augmentation
 * (`declare module '@syncopate/passes' { interface PassOptions { ... } }`, see docs/custom-pass.md).
 */
export interface PassOptions {
  readonly 'align-chunks'?: AlignOptions;
  readonly 'reorder-tiles'?: ReorderOptions;
}

/** One field of a pass's options: which values it takes, as a test and in words for the diagnostic. */
export interface OptionField<T> {
  /** What a good value is, as a diagnostic says it: `one of 'any', 'aligned'`, `an integer >= 1`. */
  readonly expected: string;
  readonly accepts: (value: unknown) => value is T;
  /** The names it takes, where it takes names, so a misspelt one can be answered with the nearest. */
  readonly names?: readonly string[];
}

/**
 * The fields a pass declares. `OptionSchema<ReorderOptions>` needs a field for every property of
 * `ReorderOptions`, so an options interface and its run-time check cannot drift apart.
 */
export type OptionSchema<O = Record<string, unknown>> = { readonly [K in keyof O]-?: OptionField<Exclude<O[K], undefined>> };

/** The options object a schema describes: every field optional, each of the type its field accepts. */
export type OptionsOf<S> = { readonly [K in keyof S]?: S[K] extends OptionField<infer T> ? T : never };

const quoted = (names: readonly string[]) => names.map((n) => `'${n}'`).join(', ');

/** Builders for the fields of an `OptionSchema`. */
export const option = {
  oneOf<const V extends readonly string[]>(...values: V): OptionField<V[number]> {
    return { expected: `one of ${quoted(values)}`, accepts: (v): v is V[number] => typeof v === 'string' && values.includes(v), names: values };
  },
  /** An integer, at least `min` when given. */
  integer(min?: number): OptionField<number> {
    return {
      expected: min === undefined ? 'an integer' : `an integer >= ${min}`,
      accepts: (v): v is number => Number.isInteger(v) && (min === undefined || (v as number) >= min),
    };
  },
  number(): OptionField<number> {
    return { expected: 'a finite number', accepts: (v): v is number => typeof v === 'number' && Number.isFinite(v) };
  },
  string(): OptionField<string> {
    return { expected: 'a string', accepts: (v): v is string => typeof v === 'string' };
  },
  boolean(): OptionField<boolean> {
    return { expected: 'true or false', accepts: (v): v is boolean => typeof v === 'boolean' };
  },
  /** A function; only its being callable can be checked, its type is the caller's word. */
  function<F extends (...args: never[]) => unknown>(): OptionField<F> {
    return { expected: 'a function', accepts: (v): v is F => typeof v === 'function' };
  },
  list<T>(item: OptionField<T>): OptionField<readonly T[]> {
    return { expected: `a list, each item ${item.expected}`, accepts: (v): v is readonly T[] => Array.isArray(v) && v.every((x) => item.accepts(x)) };
  },
  either<A, B>(a: OptionField<A>, b: OptionField<B>): OptionField<A | B> {
    const names = [...(a.names ?? []), ...(b.names ?? [])];
    return { expected: `${a.expected}, or ${b.expected}`, accepts: (v): v is A | B => a.accepts(v) || b.accepts(v), ...(names.length > 0 && { names }) };
  },
};

/**
 * Every problem with `options` for `passes`, empty when there is none. A key must name a pass of the
 * pipeline: options for any other pass, even a registered one, would be ignored without a word,
 * which is what this check is for (as `printAfter` names are checked against the pipeline, not the
 * registry). A pass's fields must be ones it declares; a pass that declares none takes none.
 */
export function checkPassOptions(passes: readonly Pass[], options: unknown): Diagnostic[] {
  if (!isPlainObject(options)) {
    return [error('options/not-an-object', `pass options must be an object keyed by pass name, not ${describeValue(options)}`)];
  }
  const byName = new Map(passes.map((p) => [p.name, p]));
  const names = [...byName.keys()];
  return Object.entries(options).flatMap(([key, value]) => {
    const pass = byName.get(key);
    if (pass) return checkFieldsOf(pass.name, pass.options, value);
    const known = names.length > 0 ? `the passes of this pipeline are ${quoted(names)}` : 'the pipeline is empty';
    const near = nearest(key, names);
    // `{ order: 'grouped' }`: a pass's field given without the pass's name around it.
    const owner = near ? undefined : passes.find((p) => p.options !== undefined && Object.hasOwn(p.options, key));
    const hint = near ? `: did you mean '${near}'?` : owner ? `: '${key}' is a field of '${owner.name}', so write { '${owner.name}': { ${key}: ... } }.` : '.';
    return [error('options/unknown-pass', `unknown pass option '${key}'${hint} Options are keyed by the name of a pass that runs; ${known}`)];
  });
}

/** What is wrong with `value` as the options of the pass `name`, whose fields are `schema`. */
export function checkFieldsOf(name: string, schema: OptionSchema | undefined, value: unknown): Diagnostic[] {
  if (value === undefined) return [];
  const at = { pass: name };
  const fields = Object.keys(schema ?? {});
  const knownFields = fields.length > 0 ? `it takes ${quoted(fields)}` : 'it declares no options';
  if (!isPlainObject(value)) {
    return [error('options/not-an-object', `pass option '${name}' must be an object of fields (${knownFields}), not ${describeValue(value)}`, at)];
  }
  return Object.entries(value).flatMap(([field, v]) => {
    const spec = Object.hasOwn(schema ?? {}, field) ? schema![field] : undefined;
    if (!spec) {
      const near = nearest(field, fields);
      return [error('options/unknown-field', `pass option '${name}' has no field '${field}'${near ? `: did you mean '${near}'?` : ''} (${knownFields})`, at)];
    }
    // An absent field and one set to undefined mean the same: the pass's default.
    if (v === undefined || spec.accepts(v)) return [];
    const near = typeof v === 'string' ? nearest(v, spec.names ?? []) : undefined;
    return [error('options/bad-value', `pass option '${name}'.${field} must be ${spec.expected}, not ${describeValue(v)}${near ? `: did you mean '${near}'?` : ''}`, at)];
  });
}

function isPlainObject(x: unknown): x is Readonly<Record<string, unknown>> {
  if (typeof x !== 'object' || x === null || Array.isArray(x)) return false;
  const proto = Object.getPrototypeOf(x);
  return proto === Object.prototype || proto === null;
}

function describeValue(v: unknown): string {
  if (typeof v === 'string') return `'${v}'`;
  if (typeof v === 'function') return 'a function';
  if (Array.isArray(v)) return `[${v.map(describeValue).join(', ')}]`;
  if (v === null || typeof v !== 'object') return String(v);
  return 'an object';
}

/** The name closest to `word`, if it is close enough to be a slip of the keyboard. */
function nearest(word: string, names: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const name of names) {
    const d = editDistance(word.toLowerCase(), name.toLowerCase());
    if (d < bestDistance) [best, bestDistance] = [name, d];
  }
  return bestDistance <= Math.max(1, Math.floor(word.length / 3)) ? best : undefined;
}

/** Edits (insert, delete, replace, swap two neighbours) that turn `a` into `b`: the optimal string alignment distance. */
function editDistance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const row = d[i]!;
      row[j] = Math.min(d[i - 1]![j]! + 1, row[j - 1]! + 1, d[i - 1]![j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) row[j] = Math.min(row[j]!, d[i - 2]![j - 2]! + 1);
    }
  }
  return d[a.length]![b.length]!;
}
