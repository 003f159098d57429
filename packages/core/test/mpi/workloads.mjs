// Under mpirun: `node workloads.mjs <bundle> <command lines as JSON>`. Every process joins the job once
// and runs each command line (`syncopate ...` without the name) over its block of the devices, as the
// CLI does; process 0 prints each report as a line `report <exit code> <JSON>`.
const core = await import(process.argv[2]);
const commands = JSON.parse(process.argv[3]);
const group = await core.joinProcessGroup({ timeoutMs: 60_000 });
let failed = false;
for (const argv of commands) {
  let out = '';
  const code = await core.main([...argv, '--json'], {
    processes: group,
    out: (s) => (out += s),
    err: (s) => process.stderr.write(`[process ${group.rank}] ${s}\n`),
  });
  if (group.rank === 0) process.stdout.write(`report ${code} ${out.replace(/\n\s*/g, ' ')}\n`);
  failed ||= code !== 0;
}
await group.close();
process.exitCode = failed ? 1 : 0;
