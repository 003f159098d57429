// Under mpirun: `node workloads.mjs <bundle> <command lines as JSON>`. Every process joins the job once
// and runs each command line (`syncopate ...` without the name) over its block of the devices, as the
// CLI does (with a longer GPU wait); process 0 prints each report as a line `report <exit code> <JSON>`.
const core = await import(process.argv[2]);
const commands = JSON.parse(process.argv[3]);
const group = await core.joinProcessGroup({ timeoutMs: 60_000 });
let failed = false;
for (const argv of commands) {
  // As `syncopate run` runs it, but with a longer GPU wait: a machine with no shader cache compiles
  // every kernel first, three processes at once on two cores.
  const { options } = core.parseCommandLine(argv);
  const report = await core.runWorkload({ ...options, devices: options.devices ?? group.size, processes: group, timeoutMs: 120_000 });
  const code = report.verified ? 0 : 1;
  if (group.rank === 0) process.stdout.write(`report ${code} ${JSON.stringify(report)}\n`);
  failed ||= code !== 0;
}
await group.close();
process.exitCode = failed ? 1 : 0;
