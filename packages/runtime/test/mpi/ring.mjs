// mpirun -n P node ring.mjs <runtime URL> [big]: each process sends to the next and receives from
// the previous, at sizes from 0 bytes (a message with no data) to 64 MiB (rendezvous, with "big"),
// then allGather and barrier, refusals before anything is posted, and a receive of the wrong size.
// With EXPECT_COPY=cma|mpi, the path the group must have chosen between processes on one host.
import { check, pattern, rejection, runtime, sameBytes } from './common.mjs';

const { joinProcessGroup, UsageError, ProcessTransferError } = runtime;
const group = await joinProcessGroup({ timeoutMs: 20_000 });
check((await joinProcessGroup()) === group, 'a second join returns the same group');
const { rank, size } = group;
const next = (rank + 1) % size;
const previous = (rank + size - 1) % size;

if (process.env.EXPECT_COPY) check(group.sameHostCopy === process.env.EXPECT_COPY, `same-host copy ${group.sameHostCopy} (${group.sameHostCopyReason}), expected ${process.env.EXPECT_COPY}`);

// Odd sizes, and (with "big") ones the copy threads cut into several slices with a short last one.
const sizes = [0, 1, 15, 16, 17, 4096, (1 << 20) + 3, (3 << 20) + 5, ...(process.argv[3] === 'big' ? [64 << 20, (64 << 20) + 13] : [])];
for (const [tag, bytes] of sizes.entries()) {
  // 8 guard bytes on each side of the range: a receive must not write them.
  const block = new Uint8Array(bytes + 16).fill(0xee);
  const into = block.subarray(8, 8 + bytes);
  const label = `ring ${bytes} B (process ${previous} -> ${rank})`;
  await Promise.all([group.send(pattern(bytes, rank), bytes, next, tag, label), group.receive(into, bytes, previous, tag, label)]);
  check(sameBytes(into, pattern(bytes, previous)), `${label}: bytes differ`);
  check(block.subarray(0, 8).every((b) => b === 0xee) && block.subarray(8 + bytes).every((b) => b === 0xee), `${label}: wrote outside the range`);
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

// A message shorter than the receive: the two sides disagree about the plan. On the single-copy path
// the receiver refuses it before copying (its range untouched) and the send learns so from the ack.
const shortInto = new Uint8Array(16).fill(0xee);
const [sent, got] = await Promise.allSettled([group.send(pattern(8, rank), 8, next, 100, 'short'), group.receive(shortInto, 16, previous, 100, 'short')]);
check(got.status === 'rejected' && got.reason instanceof ProcessTransferError, `short: the receive ${got.status} ${got.reason}`);
const short = got.reason;
check(short.received === 8 && short.peer === previous && short.label === 'short', `short: ${short.message}`);
if (group.sameHostCopy === 'cma') {
  check(shortInto.every((b) => b === 0xee), 'short: a refused single copy wrote into the range');
  check(sent.status === 'rejected' && sent.reason instanceof ProcessTransferError && /expected 16 bytes, this send has 8/.test(sent.reason.message), `short: the send ${sent.status} ${sent.reason}`);
  check(sent.reason.peer === next, `short: the send's error names process ${sent.reason.peer}`);
} else check(sent.status === 'fulfilled', `short: the send ${sent.status} ${sent.reason}`);

// process_vm_readv's failures as the addon reports them (the probe's read; a transfer's reads fail the same way).
if (group.sameHostCopy === 'cma') {
  const addon = { exports: {} };
  process.dlopen(addon, process.env.SYNCOPATE_MPI_ADDON);
  const token = (pid, address) => new Uint8Array(new BigUint64Array([BigInt(pid), BigInt(address), 0n, 0n]).buffer);
  check(/Bad address/.test(addon.exports.cmaCheck(token(process.pid, 8))), 'cmaCheck of an unmapped address');
  check(/No such process/.test(addon.exports.cmaCheck(token(2 ** 22 + 12345, 4096))), 'cmaCheck of a process that does not exist');
}

await group.close();
await rejection(() => group.barrier(), UsageError, 'barrier after close');
console.log(`ok ${rank} of ${size} on ${group.host}, same-host copy ${group.sameHostCopy} (${group.sameHostCopyReason})`);
