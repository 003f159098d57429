/**
 * One fuzz case through the path `syncopate run` takes (`runWorkload`: defaults, bounds checks on,
 * the outputs checked against the CPU reference), bounded in time, and what came of it: verified,
 * refused (a UsageError, with its message), or failed: wrong (checked and not equal), timeout (the
 * case's bound or a GPU wait ran out) or error (anything else, with its class and message).
 */
import { runWorkload, UsageError, type RunReport } from '@syncopate/core';
import type { DeviceHandle } from '@syncopate/runtime';
import { caseCommand, type FuzzCase } from './fuzz-cases.js';

export type Outcome = 'verified' | 'refused' | 'wrong' | 'timeout' | 'error';
export const OUTCOMES: readonly Outcome[] = ['verified', 'refused', 'wrong', 'timeout', 'error'];
export const failed = (o: Outcome) => o === 'wrong' || o === 'timeout' || o === 'error';

export interface FuzzResult {
  readonly index: number;
  readonly outcome: Outcome;
  readonly command: string;
  readonly case: FuzzCase;
  readonly ms: number;
  readonly maxAbsError?: number;
  readonly plan?: string;
  readonly target?: string;
  readonly phases?: readonly number[];
  /** For refused and failed cases: the error's class and message. */
  readonly error?: string;
  readonly message?: string;
}

/** The case's own bound ran out (the run may still be going). */
class CaseTimeout extends Error {
  constructor(ms: number) {
    super(`the case did not finish in ${ms} ms`);
    this.name = 'CaseTimeout';
  }
}

/** Bundlers rename classes that share a name (UsageError2): the runtime's and core's are both refusals. */
const isRefusal = (e: unknown) => e instanceof UsageError || (e instanceof Error && /^UsageError\d*$/.test(e.name));
const isTimeout = (e: unknown) => e instanceof Error && /Timeout/.test(e.name);

/**
 * Devices opened once and shared by the cases; after a failure they are closed (once the run has
 * settled, or given up on after `graceMs`) and the next case opens fresh ones, so a lost or hung
 * device costs one case, not the rest.
 */
export class FuzzDevices {
  private handles: Promise<DeviceHandle[]> | undefined;

  constructor(
    private readonly open: () => Promise<DeviceHandle[]>,
    private readonly graceMs = 15_000,
  ) {}

  async take(count: number): Promise<DeviceHandle[]> {
    this.handles ??= this.open();
    return (await this.handles).slice(0, count);
  }

  /** Fresh devices for the next case once `settled` has (or `graceMs` has passed: those are left open, not closed under a running copy). */
  async renew(settled: Promise<unknown>): Promise<void> {
    const old = this.handles;
    this.handles = undefined;
    if (!old) return;
    const done = await Promise.race([settled.then(() => true, () => true), new Promise<boolean>((r) => setTimeout(() => r(false), this.graceMs).unref())]);
    if (done) (await old.catch(() => [])).forEach((h) => h.close());
  }

  async close(): Promise<void> {
    await this.renew(Promise.resolve());
  }
}

function fromReport(base: Omit<FuzzResult, 'outcome' | 'ms'>, report: RunReport, ms: number): FuzzResult {
  return {
    ...base,
    outcome: report.verified ? 'verified' : 'wrong',
    ms,
    maxAbsError: report.maxAbsError,
    plan: report.plan,
    ...(report.target ? { target: report.target } : {}),
    phases: report.phases,
  };
}

/** Runs `c` on `devices` within `timeoutMs` (every GPU wait inside bounded by it too). */
export async function runCase(c: FuzzCase, devices: FuzzDevices, timeoutMs: number): Promise<FuzzResult> {
  const base = { index: c.index, command: caseCommand(c), case: c };
  const start = performance.now();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let run: Promise<RunReport> = Promise.reject(new Error('not started'));
  run.catch(() => undefined);
  try {
    const handles = await devices.take(c.devices);
    const { index: _, ...options } = c;
    run = runWorkload({ ...options, handles, timeoutMs, timedRuns: 1 });
    run.catch(() => undefined); // settled later than the bound: nobody else awaits it
    const limit = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new CaseTimeout(timeoutMs)), timeoutMs)));
    const report = await Promise.race([run, limit]);
    const result = fromReport(base, report, performance.now() - start);
    if (failed(result.outcome)) await devices.renew(run);
    return result;
  } catch (e) {
    const ms = performance.now() - start;
    const error = e instanceof Error ? e.name : typeof e;
    const message = e instanceof Error ? e.message : String(e);
    if (isRefusal(e)) return { ...base, outcome: 'refused', ms, error: 'UsageError', message };
    await devices.renew(run);
    const detail = e instanceof Error && !isTimeout(e) ? `${message}\n${(e.stack ?? '').split('\n').slice(1, 6).join('\n')}` : message;
    return { ...base, outcome: isTimeout(e) ? 'timeout' : 'error', ms, error, message: detail };
  } finally {
    clearTimeout(timer);
  }
}
