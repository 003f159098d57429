// mpirun -n 2 node bandwidth.mjs <runtime URL> [MiB] [rounds]: process 0 sends a message of MiB
// (default 64) to process 1, which answers with an empty one; the median round over `rounds`
// (default 10, after 2 unmeasured) as GB/s, and the path it took (SYNCOPATE_MPI_SINGLE_COPY=0 forces
// MPI's own; SYNCOPATE_MPI_COPY_THREADS sets the single copy's threads). Not a test: the figure for the
// transport's report.
import { runtime } from './common.mjs';

const bytes = Number(process.argv[3] ?? 64) * 2 ** 20;
const rounds = Number(process.argv[4] ?? 10);
const group = await runtime.joinProcessGroup();
const data = new Uint8Array(bytes).fill(group.rank + 1);
const empty = new Uint8Array(0);
const times = [];
await group.barrier();
for (let round = 0; round < rounds + 2; round++) {
  const started = performance.now();
  if (group.rank === 0) {
    await group.send(data, bytes, 1, 1, `round ${round}`);
    await group.receive(empty, 0, 1, 2, `ack ${round}`);
  } else {
    await group.receive(data, bytes, 0, 1, `round ${round}`);
    await group.send(empty, 0, 0, 2, `ack ${round}`);
  }
  if (round >= 2) times.push(performance.now() - started);
}
if (group.rank === 0) {
  times.sort((a, b) => a - b);
  const median = times[times.length >> 1];
  console.log(`${bytes / 2 ** 20} MiB: median ${median.toFixed(2)} ms, ${(bytes / median / 1e6).toFixed(2)} GB/s (best ${(bytes / times[0] / 1e6).toFixed(2)}) over ${rounds} rounds; same-host copy ${group.sameHostCopy} (${group.sameHostCopyReason}); ${group.library.split(',')[0]}`);
}
await group.close();
