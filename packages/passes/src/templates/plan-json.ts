/**
 * The JSON form of a chunk plan (docs/plans.md): what hand-written plans and plans ported from other
 * systems are saved as.
 *
 *   { "version": 1, "name": "...", "ranks": 4,
 *     "chunks": [ { "tensor": "A", "region": [[0, 64], [0, 128]], "src": 0, "dst": 1, "step": 0,
 *                   "kind": "copy", "backend": "auto" } ] }
 */
import { CHUNK_KINDS, COMM_BACKENDS, SyncopateError, type ChunkKind, type ChunkPlan, type ChunkSpec, type CommBackend } from '@syncopate/ir';

export const PLAN_FORMAT_VERSION = 1;

/** A plan file that is not valid JSON or not of the plan form; `path` is where, e.g. `chunks[3].src`. */
export class PlanFormatError extends SyncopateError {
  constructor(
    readonly path: string,
    readonly problem: string,
  ) {
    super(`plan ${path}: ${problem}`);
  }
}

/** The JSON form of `plan`, one chunk per line (plans are read and diffed by people). */
export function planToJson(plan: ChunkPlan): string {
  const fields = [`"version": ${PLAN_FORMAT_VERSION}`];
  if (plan.name !== undefined) fields.push(`"name": ${JSON.stringify(plan.name)}`);
  fields.push(`"ranks": ${plan.ranks}`);
  const chunks = plan.chunks.map((c) =>
    JSON.stringify({
      tensor: c.tensor,
      region: c.region.lo.map((lo, i) => [lo, c.region.hi[i]]),
      src: c.src,
      dst: c.dst,
      step: c.step,
      kind: c.kind ?? 'copy',
      backend: c.backend ?? 'auto',
    }),
  );
  const list = chunks.length === 0 ? '[]' : `[\n    ${chunks.join(',\n    ')}\n  ]`;
  return `{\n  ${[...fields, `"chunks": ${list}`].join(',\n  ')}\n}\n`;
}

type Json = unknown;

function isObject(x: Json): x is Record<string, Json> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

function integer(x: Json, path: string, min: number): number {
  if (typeof x !== 'number' || !Number.isInteger(x) || x < min) {
    throw new PlanFormatError(path, `expected an integer >= ${min}, found ${JSON.stringify(x)}`);
  }
  return x;
}

function oneOf<T extends string>(x: Json, path: string, allowed: readonly T[], fallback: T): T {
  if (x === undefined) return fallback;
  if (typeof x !== 'string' || !allowed.includes(x as T)) {
    throw new PlanFormatError(path, `expected one of ${allowed.map((a) => `"${a}"`).join(', ')}, found ${JSON.stringify(x)}`);
  }
  return x as T;
}

function region(x: Json, path: string): { lo: number[]; hi: number[] } {
  if (!Array.isArray(x) || x.length === 0) throw new PlanFormatError(path, 'expected a list of [lo, hi] pairs, one per axis');
  const lo: number[] = [];
  const hi: number[] = [];
  x.forEach((pair: Json, i) => {
    const at = `${path}[${i}]`;
    if (!Array.isArray(pair) || pair.length !== 2) throw new PlanFormatError(at, `expected [lo, hi], found ${JSON.stringify(pair)}`);
    const a = integer(pair[0], `${at}[0]`, 0);
    const b = integer(pair[1], `${at}[1]`, 0);
    if (b <= a) throw new PlanFormatError(at, `expected lo < hi, found [${a}, ${b}]`);
    lo.push(a);
    hi.push(b);
  });
  return { lo, hi };
}

function chunkSpec(x: Json, path: string): ChunkSpec {
  if (!isObject(x)) throw new PlanFormatError(path, 'expected an object');
  if (typeof x.tensor !== 'string' || x.tensor === '') throw new PlanFormatError(`${path}.tensor`, 'expected a tensor name');
  return {
    tensor: x.tensor,
    region: region(x.region, `${path}.region`),
    src: integer(x.src, `${path}.src`, 0),
    dst: integer(x.dst, `${path}.dst`, 0),
    step: integer(x.step, `${path}.step`, 0),
    kind: oneOf<ChunkKind>(x.kind, `${path}.kind`, CHUNK_KINDS, 'copy'),
    backend: oneOf<CommBackend>(x.backend, `${path}.backend`, COMM_BACKENDS, 'auto'),
  };
}

/** Reads a plan from its JSON form; throws `PlanFormatError` naming the path of the first problem. */
export function planFromJson(text: string): ChunkPlan {
  let json: Json;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new PlanFormatError('(file)', `not valid JSON: ${(e as Error).message}`);
  }
  if (!isObject(json)) throw new PlanFormatError('(root)', 'expected an object with "version", "ranks" and "chunks"');
  if (json.version !== PLAN_FORMAT_VERSION) {
    throw new PlanFormatError('version', `expected ${PLAN_FORMAT_VERSION}, found ${JSON.stringify(json.version)}`);
  }
  if (json.name !== undefined && typeof json.name !== 'string') throw new PlanFormatError('name', 'expected a string');
  const ranks = integer(json.ranks, 'ranks', 1);
  if (!Array.isArray(json.chunks)) throw new PlanFormatError('chunks', 'expected a list of chunks');
  const chunks = json.chunks.map((c: Json, i) => chunkSpec(c, `chunks[${i}]`));
  chunks.forEach((c, i) => {
    for (const [field, v] of [['src', c.src], ['dst', c.dst]] as const) {
      if (v >= ranks) throw new PlanFormatError(`chunks[${i}].${field}`, `rank ${v} is out of range for ${ranks} ranks`);
    }
  });
  return { ...(typeof json.name === 'string' ? { name: json.name } : {}), ranks, chunks };
}
