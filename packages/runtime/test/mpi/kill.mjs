// mpirun -n 2 node kill.mjs <runtime URL> kill|abort: process 0 waits in a receive; once it is
// posted, process 1 kills itself (SIGKILL) or calls group.abort(3, message). mpirun then sends
// SIGTERM to process 0, which must write a ProcessLostError line naming the receive and exit. Each
// process prints its pid first.
import { runtime } from './common.mjs';

const mode = process.argv[3];
const group = await runtime.joinProcessGroup({ timeoutMs: 60_000 });
console.log(`pid ${group.rank} ${process.pid}`);
await group.barrier();
if (group.rank === 0) {
  await group.receive(new Uint8Array(64), 64, 1, 3, 'chunk 3 (rank 1 -> rank 0)');
  console.log('received: process 1 was to end first');
} else {
  setTimeout(() => (mode === 'abort' ? group.abort(3, 'process 1 gives up (kill.mjs abort)') : process.kill(process.pid, 'SIGKILL')), 300);
}
