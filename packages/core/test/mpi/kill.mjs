// Under mpirun -n 2: `node kill.mjs <bundle> <ms>`. Both run gemm-rs over two processes again and
// again; <ms> after its kernels are lowered, process 1 kills itself (SIGKILL). mpirun must end the
// job, and process 0 must say what it had in flight with the other process (ProcessLostError lines).
const core = await import(process.argv[2]);
const group = await core.joinProcessGroup({ timeoutMs: 60_000 });
await core.runWorkload({
  workload: 'gemm-rs', ranks: 2, devices: 2, shape: { m: 64, n: 64, k: 64 }, dtype: 'f32', order: 'chunk-arrival', backend: 'auto', seed: 1,
  timedRuns: 1_000_000, timeoutMs: 60_000, verify: false, processes: group,
  onLowered: () => {
    process.stdout.write(`pid ${group.rank} ${process.pid}\n`);
    if (group.rank === 1) setTimeout(() => process.kill(process.pid, 'SIGKILL'), Number(process.argv[3]));
  },
});
