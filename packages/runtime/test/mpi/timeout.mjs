// mpirun -n 2 node timeout.mjs <runtime URL> <ms>: process 0 receives a message process 1 never
// sends; the receive must reject with ProcessTimeoutError within the bound, and both processes then
// close and exit 0 (process 0 with one more receive in flight, which close() must cancel and reject). Prints the error's fields and how long it took as JSON.
import { check, rejection, runtime } from './common.mjs';

const { joinProcessGroup, ProcessGroupError, ProcessTimeoutError } = runtime;
const ms = Number(process.argv[3]);
const group = await joinProcessGroup({ timeoutMs: ms });
if (group.rank === 0) {
  const started = performance.now();
  const into = new Uint8Array(1 << 20);
  const e = await rejection(() => group.receive(into, into.length, 1, 7, 'chunk 3 %c3 (rank 2 -> rank 0)'), ProcessTimeoutError, 'a receive never sent');
  const { label, peer, peerHost, process: me, host, ms: waited, message } = e;
  console.log(JSON.stringify({ label, peer, peerHost, process: me, host, ms: waited, message, elapsedMs: performance.now() - started }));
  // The cancelled receive is gone: a later one on the same tag gets the message sent for it.
  const small = new Uint8Array(4);
  await group.receive(small, 4, 1, 7, 'after the timeout');
  check(small.every((b) => b === 9), `after the timeout got [${small}]`);
  const inFlight = group.receive(new Uint8Array(16), 16, 1, 8, 'in flight at close');
  const refused = rejection(() => inFlight, ProcessGroupError, 'a receive in flight at close()');
  await group.close();
  await refused;
} else {
  await new Promise((resolve) => setTimeout(resolve, ms + 500));
  await group.send(new Uint8Array(4).fill(9), 4, 0, 7, 'after the timeout');
  await group.close();
}
