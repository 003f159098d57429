// mpirun -n P node ring.mjs <runtime URL> [big]: each process sends to the next and receives from
// the previous, at sizes from 0 bytes (a message with no data) to 64 MiB (rendezvous, with "big"),
// then allGather and barrier, refusals before anything is posted, and a receive of the wrong size.
import { check, pattern, rejection, runtime, sameBytes } from './common.mjs';

const { joinProcessGroup, UsageError, ProcessTransferError } = runtime;
const group = await joinProcessGroup({ timeoutMs: 20_000 });
check((await joinProcessGroup()) === group, 'a second join returns the same group');
const { rank, size } = group;
const next = (rank + 1) % size;
const previous = (rank + size - 1) % size;

const sizes = [0, 1, 15, 16, 17, 4096, (1 << 20) + 3, ...(process.argv[3] === 'big' ? [64 << 20] : [])];
for (const [tag, bytes] of sizes.entries()) {
  // 8 guard bytes past the range: a receive must not write them.
  const into = new Uint8Array(bytes + 8).fill(0xee);
  const label = `ring ${bytes} B (process ${previous} -> ${rank})`;
  await Promise.all([group.send(pattern(bytes, rank), bytes, next, tag, label), group.receive(into, bytes, previous, tag, label)]);
  check(sameBytes(into.subarray(0, bytes), pattern(bytes, previous)), `${label}: bytes differ`);
  check(into.subarray(bytes).every((b) => b === 0xee), `${label}: wrote past the range`);
}

// Process r gives r bytes of value r (process 0 nothing).
const gathered = await group.allGather(new Uint8Array(rank).fill(rank));
check(gathered.length === size, `allGather gave ${gathered.length} parts`);
gathered.forEach((part, r) => check(part.length === r && part.every((b) => b === r), `allGather part ${r} is [${part}]`));
check(group.hosts.length === size && group.hosts[rank] === group.host, `hosts ${group.hosts}`);
check(group.localSize === group.hosts.filter((h) => h === group.host).length && group.localRank === group.hosts.slice(0, rank).filter((h) => h === group.host).length, 'local rank');
check(group.library.startsWith('Open MPI v4.'), `library ${group.library}`);
await group.barrier();

// Refused before anything is posted: had they been, the exchange on tag 99 below would match them.
const small = new Uint8Array(8);
await rejection(() => group.send(small, 8, next, 2 ** 31, 'tag too big'), UsageError, 'tag past MPI_TAG_UB');
await rejection(() => group.send(small, 8, next, -1, 'negative tag'), UsageError, 'negative tag');
await rejection(() => group.send(small, 9, next, 99, 'past the view'), UsageError, 'bytes past the view');
await rejection(() => group.receive(small, 9, previous, 99, 'past the view'), UsageError, 'receive past the view');
await rejection(() => group.send(small, 8, size, 99, 'no such process'), UsageError, 'process out of range');
await rejection(() => group.send(small, 1.5, next, 99, 'half a byte'), UsageError, 'fractional bytes');
const into = new Uint8Array(4);
await Promise.all([group.send(pattern(4, rank), 4, next, 99, 'after refusals'), group.receive(into, 4, previous, 99, 'after refusals')]);
check(sameBytes(into, pattern(4, previous)), 'the exchange after refusals got other bytes');

// A message shorter than the receive: the two sides disagree about the plan.
const short = await rejection(
  () => Promise.all([group.send(pattern(8, rank), 8, next, 100, 'short'), group.receive(new Uint8Array(16), 16, previous, 100, 'short')]),
  ProcessTransferError,
  'a message of 8 bytes into a receive of 16',
);
check(short.received === 8 && short.peer === previous && short.label === 'short', `short: ${short.message}`);

await group.close();
await rejection(() => group.barrier(), UsageError, 'barrier after close');
console.log(`ok ${rank} of ${size} on ${group.host}`);
