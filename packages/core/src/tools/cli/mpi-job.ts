/**
 * `syncopate` started under mpirun: every process joins the job and runs the same command over its
 * block of the devices; process 0 alone prints the output, every process prints its errors (named
 * by process and host). A failure one process alone meets (a transfer that timed out, a lost device)
 * ends the whole job, so no process is left waiting for it; a refusal or a wrong answer every
 * process meets alike ends each one normally.
 */
import { joinProcessGroup, launchedByMpi, RuntimeError } from '@syncopate/runtime';
import type { MainIO } from './main.js';

/** Runs `command` as this process of the job, or alone outside one; resolves to the exit code (or never, if it ended the job). */
export async function runInJob(io: MainIO, command: (io: MainIO) => Promise<number>): Promise<number> {
  if (!launchedByMpi()) return command(io);
  const group = await joinProcessGroup();
  if (!group || group.size === 1) {
    const code = await command(io);
    await group?.close();
    return code;
  }
  let alone: unknown;
  const code = await command({
    ...io,
    processes: group,
    out: group.rank === 0 ? io.out : () => {},
    err: (s) => io.err(group.rank === 0 ? s : `[process ${group.rank} on ${group.host}] ${s}`),
    ...(group.rank === 0 && io.progress ? { progress: io.progress } : {}),
    onFailure: (thrown) => (alone = thrown instanceof RuntimeError ? thrown : alone),
  });
  // The other processes may be waiting on this one: end them too (mpirun stops the job).
  if (alone !== undefined) group.abort(code, `[process ${group.rank} on ${group.host}] ending the job: ${(alone as Error).name}`);
  await group.close();
  return code;
}
