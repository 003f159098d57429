// Under mpirun -n 2: `node stall.mjs <bundle> <timeout ms>`. Both processes run ag-gemm over two
// processes, but process 1's sends never leave (its group's send is replaced by one that never
// settles): process 0 must end with a typed error naming the chunk, ranks and hosts within the
// timeout, then end the job as the CLI does (runInJob), so process 1 is not left behind.
const core = await import(process.argv[2]);
const timeoutMs = Number(process.argv[3]);
const group = await core.joinProcessGroup({ timeoutMs });
const link = group.rank === 1 ? Object.assign(Object.create(group), { send: () => new Promise(() => {}) }) : group;
for (const key of ['rank', 'size', 'hosts', 'localRank']) Object.defineProperty(link, key, { value: group[key] });
try {
  await core.runWorkload({ workload: 'ag-gemm', ranks: 2, devices: 2, shape: { m: 64, n: 32, k: 32 }, dtype: 'f32', order: 'chunk-arrival', backend: 'auto', seed: 1, timedRuns: 0, timeoutMs, processes: link });
  process.stdout.write(`process ${group.rank}: finished\n`);
} catch (e) {
  const cause = e.cause ?? e;
  process.stdout.write(`error ${group.rank} ${JSON.stringify({ name: e.name, message: e.message, cause: cause.name })}\n`);
  group.abort(1, `[process ${group.rank}] ending the job: ${e.name}`);
}
await group.close();
