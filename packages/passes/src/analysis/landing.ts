/**
 * Where chunks land: per tensor and destination rank, the chunks landing there in plan order, each
 * list indexed by region when first asked. Plan checks compare a chunk with those landing where it
 * lands or where it is sent from, and the gpu-signal chunk table looks up the chunks a chunk forwards
 * the same way; at 64 ranks each rank receives from every other, so a pass over the list per chunk
 * was cubic in the ranks. Made once per chunk list, which passes that leave the chunks alone share.
 */
import { BoxIndex, type Box, type ChunkDecl } from '@syncopate/ir';

export interface Landing {
  /** Tensor → destination rank → the chunks landing there, in plan order. */
  readonly lists: ReadonlyMap<string, ReadonlyMap<number, readonly ChunkDecl[]>>;
  /** Each chunk's place in its landing list. */
  readonly place: ReadonlyMap<ChunkDecl, number>;
  readonly indexes: Map<readonly ChunkDecl[], BoxIndex<ChunkDecl>>;
}

const landings = new WeakMap<readonly ChunkDecl[], Landing>();

export function chunkLanding(chunks: readonly ChunkDecl[]): Landing {
  const known = landings.get(chunks);
  if (known) return known;
  const lists = new Map<string, Map<number, ChunkDecl[]>>();
  const place = new Map<ChunkDecl, number>();
  for (const chunk of chunks) {
    let byRank = lists.get(chunk.tensor);
    if (!byRank) lists.set(chunk.tensor, (byRank = new Map()));
    let list = byRank.get(chunk.dst);
    if (!list) byRank.set(chunk.dst, (list = []));
    place.set(chunk, list.length);
    list.push(chunk);
  }
  const made = { lists, place, indexes: new Map() };
  landings.set(chunks, made);
  return made;
}

const NONE: readonly ChunkDecl[] = [];

/** The chunks landing in `rank`'s copy of `tensor`, in plan order. */
export function landingIn(chunks: readonly ChunkDecl[], tensor: string, rank: number): readonly ChunkDecl[] {
  return chunkLanding(chunks).lists.get(tensor)?.get(rank) ?? NONE;
}

/** The places (in `landingIn`'s list) of those chunks whose regions meet `box`, in plan order. */
export function landingMeeting(chunks: readonly ChunkDecl[], tensor: string, rank: number, box: Box): number[] {
  const list = landingIn(chunks, tensor, rank);
  if (list.length === 0) return [];
  const { indexes } = chunkLanding(chunks);
  let index = indexes.get(list);
  if (!index) indexes.set(list, (index = new BoxIndex(list, (c) => c.region)));
  return index.meetingPositions(box);
}
