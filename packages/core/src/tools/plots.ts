/**
 * Plots as standalone SVG text (no dependency, readable in any browser and on GitHub): the speedup of
 * the fused variant per benchmark row, and a timeline of one run's events per track.
 */
import type { BenchReport } from './bench.js';
import type { ChromeTrace } from './trace.js';

const escapeXml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const SERIES = [
  { key: 'overSequential', label: 'fused vs sequential', color: '#2b6cb0' },
  { key: 'overDecomposed', label: 'fused vs decomposed', color: '#dd6b20' },
] as const;

/** The label of a bench row: what tells rows of one bench apart. */
export function benchRowLabel(r: BenchReport): string {
  const { m, n, k } = r.shape;
  return `${r.workload} ${m}x${n}x${k} R${r.ranks} D${r.devices} ${r.order} c${r.chunksPerRank}`;
}

/** A horizontal bar chart: per row, fused's speedup over sequential and over decomposed; a rule at 1x. */
export function speedupSvg(reports: readonly BenchReport[], title = 'Speedup of the fused kernel'): string {
  const labelWidth = 330;
  const plotWidth = 420;
  const bar = 12;
  const rowHeight = SERIES.length * bar + 10;
  const top = 48;
  const height = top + reports.length * rowHeight + 36;
  const max = Math.max(1.5, ...reports.flatMap((r) => SERIES.map((s) => r.speedup[s.key])).filter(Number.isFinite));
  const x = (v: number) => labelWidth + (Math.max(0, v) / max) * plotWidth;
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${labelWidth + plotWidth + 60}" height="${height}" font-family="sans-serif" font-size="11">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="10" y="18" font-size="14" font-weight="bold">${escapeXml(title)}</text>`,
    ...SERIES.map((s, i) => `<rect x="${labelWidth + i * 170}" y="28" width="10" height="10" fill="${s.color}"/><text x="${labelWidth + i * 170 + 14}" y="37">${s.label}</text>`),
  ];
  reports.forEach((r, row) => {
    const y0 = top + row * rowHeight;
    parts.push(`<text x="${labelWidth - 6}" y="${y0 + rowHeight / 2}" text-anchor="end">${escapeXml(benchRowLabel(r))}</text>`);
    SERIES.forEach((s, i) => {
      const v = r.speedup[s.key];
      const y = y0 + i * bar;
      parts.push(`<rect class="bar" x="${labelWidth}" y="${y}" width="${(x(v) - labelWidth).toFixed(1)}" height="${bar - 2}" fill="${s.color}"/>`);
      parts.push(`<text x="${(x(v) + 4).toFixed(1)}" y="${y + bar - 3}">${Number.isFinite(v) ? v.toFixed(2) : '–'}x</text>`);
    });
  });
  const axisY = top + reports.length * rowHeight;
  parts.push(`<line x1="${x(1)}" y1="${top - 4}" x2="${x(1)}" y2="${axisY}" stroke="black" stroke-dasharray="3,3"/>`);
  parts.push(`<text x="${x(1)}" y="${axisY + 14}" text-anchor="middle">1x</text>`);
  parts.push('</svg>');
  return parts.join('\n');
}

/** One event of a timeline: what ran on which track, from `start` for `duration` (any one unit). */
export interface TimelineEvent {
  readonly track: string;
  readonly name: string;
  readonly start: number;
  readonly duration: number;
}

/** Tracks top to bottom in order of first appearance; bars coloured by event name. */
export function timelineSvg(events: readonly TimelineEvent[], title: string, unit = 'ms'): string {
  const tracks = [...new Set(events.map((e) => e.track))];
  const names = [...new Set(events.map((e) => e.name.replace(/[0-9]+/g, '#')))];
  const palette = ['#2b6cb0', '#dd6b20', '#38a169', '#805ad5', '#d53f8c', '#718096', '#d69e2e', '#319795'];
  const color = (name: string) => palette[names.indexOf(name.replace(/[0-9]+/g, '#')) % palette.length]!;
  const t0 = Math.min(...events.map((e) => e.start));
  const t1 = Math.max(...events.map((e) => e.start + e.duration));
  const span = t1 - t0 || 1;
  const labelWidth = 230;
  const plotWidth = 720;
  const trackHeight = 22;
  const top = 34;
  const x = (t: number) => labelWidth + ((t - t0) / span) * plotWidth;
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${labelWidth + plotWidth + 20}" height="${top + tracks.length * trackHeight + 30}" font-family="sans-serif" font-size="11">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="10" y="18" font-size="14" font-weight="bold">${escapeXml(title)}</text>`,
  ];
  tracks.forEach((track, i) => parts.push(`<text x="${labelWidth - 6}" y="${top + i * trackHeight + 14}" text-anchor="end">${escapeXml(track)}</text>`));
  for (const e of events) {
    const y = top + tracks.indexOf(e.track) * trackHeight;
    const width = Math.max(0.5, x(e.start + e.duration) - x(e.start));
    parts.push(`<rect x="${x(e.start).toFixed(2)}" y="${y + 2}" width="${width.toFixed(2)}" height="${trackHeight - 6}" fill="${color(e.name)}"><title>${escapeXml(`${e.name}: ${e.duration.toFixed(3)} ${unit}`)}</title></rect>`);
  }
  const axisY = top + tracks.length * trackHeight + 14;
  parts.push(`<text x="${labelWidth}" y="${axisY}">0</text><text x="${labelWidth + plotWidth}" y="${axisY}" text-anchor="end">${span.toFixed(3)} ${unit}</text>`);
  parts.push('</svg>');
  return parts.join('\n');
}

/** The spans of a Chrome trace as timeline events (ms), each on its `process / thread` track. */
export function traceTimeline(trace: ChromeTrace): TimelineEvent[] {
  const names = new Map<string, string>();
  for (const e of trace.traceEvents) {
    if (e.ph !== 'M') continue;
    const name = String(e.args?.name ?? '');
    // `device 0: <adapter>` is too long for a track label; the title names the adapter.
    if (e.name === 'process_name') names.set(`${e.pid}`, name.split(':')[0]!);
    if (e.name === 'thread_name') names.set(`${e.pid}/${e.tid}`, name);
  }
  return trace.traceEvents
    .filter((e) => e.ph === 'X' && e.ts !== undefined && e.dur !== undefined)
    .map((e) => ({
      track: `${names.get(`${e.pid}`) ?? `pid ${e.pid}`} / ${names.get(`${e.pid}/${e.tid}`) ?? `tid ${e.tid}`}`,
      name: e.name,
      start: e.ts! / 1000,
      duration: e.dur! / 1000,
    }));
}
