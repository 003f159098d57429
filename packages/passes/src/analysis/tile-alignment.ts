/**
 * Do tiles line up with chunks? A tile that straddles a chunk boundary works (it waits on both
 * chunks) but waits longer than it needs to; `align-chunks` can refuse such tiles
 * (`options['align-chunks'].tiles = 'aligned'`), and `alignedBlockSize` chooses a tile size that
 * never straddles.
 */
import { error, formatBox, type Diagnostic, type Module } from '@syncopate/ir';
import { accessSites, siteValueName } from './access-sites.js';
import { programIdDomains } from './domains.js';

export interface Straddle {
  readonly op: 'load' | 'store';
  readonly value: string;
  readonly tensor: string;
  readonly axis: number;
  /** The chunk boundary (an element index along `axis`) that the tile spans. */
  readonly boundary: number;
  /** The program id value of the first tile that spans it. */
  readonly tile: number;
  readonly extent: number;
}

/** Every element index along each axis of `tensor` where some chunk region starts or ends. */
export function chunkBoundaries(module: Module, tensor: string): number[][] {
  const t = module.tensors.find((x) => x.name === tensor);
  if (!t) return [];
  return t.shape.map((size, axis) => {
    const cuts = new Set<number>();
    for (const c of module.chunks) {
      if (c.tensor !== tensor) continue;
      for (const b of [c.region.lo[axis]!, c.region.hi[axis]!]) if (b > 0 && b < size) cuts.add(b);
    }
    return [...cuts].sort((a, b) => a - b);
  });
}

/**
 * Tiles that span a chunk boundary, for accesses whose offset along an axis is `coeff·pid + c`
 * (one program id): one entry per access, axis and boundary.
 */
export function straddlingTiles(module: Module): Straddle[] {
  const domains = programIdDomains(module);
  const out: Straddle[] = [];
  for (const site of accessSites(module)) {
    const boundaries = chunkBoundaries(module, site.tensor.name);
    site.offsets.forEach((e, axis) => {
      if (e.terms.length !== 1) return;
      const { value, coeff } = e.terms[0]!;
      const domain = domains.get(value.id);
      if (!domain) return;
      const extent = site.extent[axis]!;
      for (const b of boundaries[axis] ?? []) {
        for (let p = domain.lo; p < domain.hi; p++) {
          const start = coeff * p + e.constant;
          if (start < b && b < start + extent) {
            const name = siteValueName(site);
            out.push({ op: site.kind, value: name, tensor: site.tensor.name, axis, boundary: b, tile: p, extent });
            break;
          }
        }
      }
    });
  }
  return out;
}

/**
 * The largest of `candidates` that divides every boundary (so tiles starting at multiples of it never
 * span one), or undefined when none does.
 */
export function alignedBlockSize(boundaries: readonly number[], candidates: readonly number[]): number | undefined {
  return [...candidates].sort((a, b) => b - a).find((size) => boundaries.every((b) => b % size === 0));
}

/** `align/straddle` for each tile that spans a chunk boundary, suggesting an aligned tile size. */
export function checkTileAlignment(module: Module): Diagnostic[] {
  return straddlingTiles(module).map((s) => {
    const cuts = chunkBoundaries(module, s.tensor)[s.axis] ?? [];
    const size = alignedBlockSize(cuts, [128, 64, 32, 16, 8, 4, 2, 1].filter((c) => c <= s.extent));
    const box = { lo: [s.boundary - 1], hi: [s.boundary + 1] };
    return error(
      'align/straddle',
      `the ${s.op} of @${s.tensor} in tile ${s.tile} spans the chunk boundary at element ${s.boundary} of axis ${s.axis} ` +
        `(${s.extent} elements per tile, around ${formatBox(box)}); tiles of ${size ?? 1} elements along axis ${s.axis} would not`,
      { op: s.op, value: s.value },
    );
  });
}
