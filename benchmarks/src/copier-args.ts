/**
 * The host copier's options (PeerCopierOptions) from a benchmark's command line, so that copiers can
 * be compared in one device call: --ring N, --read-ahead N, --beside-compute RING,READAHEAD,
 * --min-piece-kib N, --max-piece-mib N, --copy-threads N (slices a native host copy is cut into; the
 * default is libuv's pool size), --copy-stores cached|streaming (how a native host copy writes:
 * HostCopierOptions.stores). Absent flags leave the copier's defaults.
 */
import { hostCopier, type HostCopyStores, type PeerCopierOptions } from '@syncopate/runtime';

export const COPIER_FLAGS = {
  ring: { type: 'string' },
  'read-ahead': { type: 'string' },
  'beside-compute': { type: 'string' },
  'min-piece-kib': { type: 'string' },
  'max-piece-mib': { type: 'string' },
  'copy-threads': { type: 'string' },
  'copy-stores': { type: 'string' },
} as const;

type CopierValues = { readonly [K in keyof typeof COPIER_FLAGS]?: string | undefined };

export function copierOptions(values: CopierValues): Omit<PeerCopierOptions, 'timeoutMs'> {
  const [besideRing, besideReadAhead] = values['beside-compute']?.split(',').map(Number) ?? [];
  return {
    ...(values.ring && { ring: Number(values.ring) }),
    ...(values['read-ahead'] && { readAhead: Number(values['read-ahead']) }),
    ...(besideRing && { besideCompute: { ring: besideRing, readAhead: besideReadAhead ?? besideRing } }),
    ...(values['min-piece-kib'] && { minPieceBytes: Number(values['min-piece-kib']) * 1024 }),
    ...(values['max-piece-mib'] && { maxPieceBytes: Number(values['max-piece-mib']) << 20 }),
    ...((values['copy-threads'] || values['copy-stores']) && {
      hostCopy: hostCopier({ ...(values['copy-threads'] && { threads: Number(values['copy-threads']) }), ...(values['copy-stores'] && { stores: values['copy-stores'] as HostCopyStores }) }).copier,
    }),
  };
}

/** A file-name tag for the copier flags given, e.g. `-ring2-beside-compute2x8-copy-threads4`. */
export function copierTag(values: CopierValues): string {
  return Object.keys(COPIER_FLAGS)
    .flatMap((flag) => {
      const value = values[flag as keyof CopierValues];
      return value === undefined ? [] : [`-${flag}${value.replace(',', 'x')}`];
    })
    .join('');
}
