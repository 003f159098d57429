#!/usr/bin/env node
/** The `syncopate` executable (dist/cli.js): `main` from ./cli/main.ts on this process's arguments. */
import { main } from './cli/main.js';
import { runInJob } from './cli/mpi-job.js';

// A reader that stops early (`syncopate compile ... | head`) is not an error worth a stack trace.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code !== 'EPIPE') throw e;
  });
}

const io = {
  out: (s: string) => void process.stdout.write(`${s}\n`),
  err: (s: string) => void process.stderr.write(`${s}\n`),
  // Only on a terminal: a log or a pipe would get every step as a line of its own.
  ...(process.stderr.isTTY ? { progress: (s: string) => void process.stderr.write(`\r\x1b[K${s}`) } : {}),
};

// exitCode, not exit(): GPU work and buffered output may still be pending when main resolves.
// Under mpirun every process runs the command over its block of the devices (cli/mpi-job.ts).
runInJob(io, (job) => main(process.argv.slice(2), job)).then(
  (code) => {
    process.exitCode = code;
  },
  (thrown: unknown) => {
    io.err(`syncopate: ${thrown instanceof Error ? thrown.message : String(thrown)}`);
    process.exitCode = 1;
  },
);
