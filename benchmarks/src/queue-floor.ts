/**
 * The one-queue floor of a two-device row: a device's one queue runs its compute, the read-back of
 * what it sends and the upload of what it gets one after another (queue-overlap-probe: every pair
 * takes the sum of its parts, benchmarks/README.md 2026-11-26), so no phasing of a run can finish
 * before compute alone + the busiest device's read-backs and uploads at their DMA rates (model-suite
 * sets it beside the run's communication alone, the other thing compute cannot shorten).
 */
import { readFileSync } from 'node:fs';
import { buildRunWorkload, crossDeviceBytes, type BenchReport, type RunOptions } from '@syncopate/core';
import { placeRanks } from '@syncopate/runtime';

/** Milliseconds a byte of read-back and of upload holds a queue (the probe's medians over its devices). */
export interface DmaRates {
  readonly readBackMsPerByte: number;
  readonly uploadMsPerByte: number;
}

interface ProbeLine {
  readonly kind: string;
  readonly case?: string;
  readonly bytes?: number;
  readonly wallMs?: { readonly median: number };
}

/** DMA rates from queue-overlap-probe's JSON lines (any number of devices, lines mixed with others). */
export function dmaRates(text: string): DmaRates {
  const lines = text.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as ProbeLine);
  let bytes = 0;
  const perByte = (name: string) => {
    const rates: number[] = [];
    for (const l of lines) {
      if (l.kind === 'setup' && l.bytes) bytes = l.bytes;
      if (l.kind === 'case' && l.case === name && l.wallMs && bytes > 0) rates.push(l.wallMs.median / bytes);
    }
    if (rates.length === 0) throw new Error(`queue probe: no '${name}' case after a setup line`);
    return rates.sort((a, b) => a - b)[Math.floor((rates.length - 1) / 2)]!;
  };
  return { readBackMsPerByte: perByte('readBack'), uploadMsPerByte: perByte('upload') };
}

export interface QueueFloor {
  readonly dmaMs: number;
  readonly floorMs: number;
}

/** Compute alone + the busiest device's DMA. */
export function queueFloor(run: RunOptions, report: BenchReport, rates: DmaRates): QueueFloor {
  const { kernel, plan } = buildRunWorkload(run);
  const perDevice = crossDeviceBytes(kernel, plan, placeRanks(run.ranks, report.devices, run.ranksPerDevice));
  const dmaMs = Math.max(...perDevice.map((d) => d.sent * rates.readBackMsPerByte + d.received * rates.uploadMsPerByte));
  return { dmaMs, floorMs: report.overlap!.computeOnlyMs.median + dmaMs };
}

export const readDmaRates = (file: string): DmaRates => dmaRates(readFileSync(file, 'utf8'));
