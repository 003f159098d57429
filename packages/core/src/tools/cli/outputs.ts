/**
 * Files the CLI writes besides its output: `--dump-wgsl DIR` (each device's WGSL and the transfer plan)
 * and `--trace FILE` (a Chrome trace). A place that cannot be written is bad usage (`UsageError`,
 * exit code 2) naming the option, the path and why; `--trace` is checked before the run, so a typo
 * does not cost a whole run.
 */
import { mkdirSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { LoweredWorkload } from '../run.js';
import type { ChromeTrace } from '../trace.js';
import { transferPlan } from '../transfer-plan.js';
import { UsageError } from '../../workloads/index.js';

const WHY: Readonly<Record<string, string>> = {
  ENOENT: 'no such directory',
  EEXIST: 'a file of that name is in the way',
  EISDIR: 'it is a directory',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  ENOTDIR: 'a part of the path is not a directory',
  EROFS: 'the file system is read-only',
  ENAMETOOLONG: 'the name is too long',
};

function cannotWrite(flag: string, path: string, e: unknown): UsageError {
  const code = (e as { code?: unknown }).code;
  const why = typeof code === 'string' ? (WHY[code] ?? code) : String(e);
  return new UsageError(`--${flag} ${path}: cannot write there (${why})`);
}

/** Writes `device-<d>.wgsl` for each device and `plan.json` into `dir` (created with its parents); returns the file names. */
export function writeWgslDump(dir: string, lowered: LoweredWorkload): string[] {
  const files = lowered.placed.devices.map((_, d) => `device-${d}.wgsl`);
  const plan = transferPlan(lowered.module, lowered.placed, (d) => files[d]!);
  try {
    mkdirSync(dir, { recursive: true });
    lowered.placed.devices.forEach(({ kernel }, d) => writeFileSync(join(dir, files[d]!), kernel.wgsl));
    writeFileSync(join(dir, 'plan.json'), JSON.stringify(plan, null, 2) + '\n');
  } catch (e) {
    throw cannotWrite('dump-wgsl', dir, e);
  }
  return [...files, 'plan.json'];
}

/** Throws `UsageError` unless `file`'s directory exists and `file` is not a directory. */
export function checkTraceFile(file: string): void {
  const dir = dirname(file);
  try {
    if (!statSync(dir).isDirectory()) throw Object.assign(new Error(), { code: 'ENOTDIR' });
  } catch (e) {
    throw cannotWrite('trace', file, e);
  }
  let isDirectory = false;
  try {
    isDirectory = statSync(file).isDirectory();
  } catch {
    // Not there yet: it will be created.
  }
  if (isDirectory) throw cannotWrite('trace', file, { code: 'EISDIR' });
}

export function writeTrace(file: string, trace: ChromeTrace): void {
  try {
    writeFileSync(file, JSON.stringify(trace) + '\n');
  } catch (e) {
    throw cannotWrite('trace', file, e);
  }
}
