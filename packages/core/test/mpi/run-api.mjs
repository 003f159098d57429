// Under mpirun: `node run-api.mjs <bundle> <devices>`. The run API over the processes of a job, as
// docs/running.md uses it alone: a device group over every process (each opens its block of
// <devices>), AllGather + GEMM loaded on it, each process giving only its own ranks' data, run twice
// (the second run on the first's output left in place), each process checking its ranks' copies
// against the CPU reference. Prints `ok <process> <ranks> <worst error>`.
const core = await import(process.argv[2]);
const devices = Number(process.argv[3]);
const [M, N, K, RANKS] = [64, 32, 32, 4];
const group = await core.joinProcessGroup({ timeoutMs: 60_000 });
const kernel = core.gemmKernel({ m: M, n: N, k: K, blockM: 16, blockN: 16, blockK: 8 }, { ranks: RANKS, distribute: 'ag' });
const compiled = core.compileOrThrow(kernel, core.ringAllGather({ ranks: RANKS, tensor: { name: 'A', shape: [M, K] }, axis: 0 }));
// The same inputs in every process (seeded), though each gives the group only its own ranks'.
let seed = 7;
const random = (n) => Float32Array.from({ length: n }, () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), (seed % 5) - 2));
const shards = Array.from({ length: RANKS }, () => random((M / RANKS) * K));
const weights = Array.from({ length: RANKS }, () => random(K * N));
function reference(rank) {
  const a = new Float32Array(M * K);
  shards.forEach((s, r) => a.set(s, r * (M / RANKS) * K));
  const c = new Float32Array(M * N);
  for (let i = 0; i < M; i++) for (let p = 0; p < K; p++) for (let j = 0; j < N; j++) c[i * N + j] += a[i * K + p] * weights[rank][p * N + j];
  return c;
}
const dg = await core.openDeviceGroup({ devices, processes: group });
let failed = false;
try {
  const mine = new Set(dg.placement(RANKS).flatMap((d, r) => (dg.runsDevice(d) ? [r] : [])));
  const only = (arrays) => arrays.map((a, r) => (mine.has(r) ? a : undefined));
  const program = await dg.load(compiled);
  const A = await dg.tensor(program.spec('A'), only(shards));
  const W = await dg.tensor(program.spec('B'), only(weights));
  const C = await dg.tensor(program.spec('C'), { fill: 0 });
  await program.run({ A, B: W, C });
  await program.run({ A, B: W, C });
  const result = await C.readRanks();
  let worst = 0;
  for (const [rank, c] of result) reference(rank).forEach((x, i) => (worst = Math.max(worst, Math.abs(x - c[i]))));
  let refused = '';
  try {
    await C.read();
  } catch (e) {
    refused = e.name;
  }
  process.stdout.write(`ok ${group.rank} ${[...result.keys()].join(',')} ${worst} ${refused}\n`);
} catch (e) {
  failed = true;
  process.stdout.write(`error ${group.rank} ${e.name}: ${e.message}\n`);
} finally {
  dg.close();
}
await group.close();
process.exitCode = failed ? 1 : 0;
