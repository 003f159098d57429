/** Runs the CLI's `main` in process and captures what it prints. */
import { main } from '../src/tools/cli/main.js';

export interface Captured {
  code: number;
  out: string;
  err: string;
}

export async function cli(...argv: string[]): Promise<Captured> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, { out: (s) => out.push(s), err: (s) => err.push(s), env: {} });
  return { code, out: out.join('\n'), err: err.join('\n') };
}
