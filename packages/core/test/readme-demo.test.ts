// The root README shows the table `bash scripts/demo.sh` prints for its first workload
// (`syncopate run ag-gemm`). This runs that command in process and fails when the README's table
// drifts from it: the same fields in the same order, the same values but for the times and the
// adapter (which vary by machine), laid out as the CLI lays it out.
import { describe, expect, it } from 'vitest';
import { alignedTable } from '../src/tools/report-format.js';
import { cli } from './cli-harness.js';
import { readRepoFile } from './doc-sync.js';

/** The sentence of README.md that introduces the demo's table. */
const INTRO = 'The demo prints, for each workload, a table like this one';
/** A timing value: milliseconds and the clock that measured them. */
const TIME = /^\d+(\.\d+)? ms \([a-z-]+\)$/;

/** The body of the first fenced block after `intro` in `markdown`. */
function blockAfter(markdown: string, intro: string): string {
  const at = markdown.indexOf(intro);
  if (at < 0) throw new Error(`no '${intro}' in README.md`);
  const match = /```[a-z]*\n([\s\S]*?)```/.exec(markdown.slice(at));
  if (!match) throw new Error(`no code block after '${intro}' in README.md`);
  return match[1]!;
}

/** Label/value rows of a table as alignedTable prints it: a label, two spaces or more, the value. */
function rows(table: string): [string, string][] {
  return table
    .trimEnd()
    .split('\n')
    .map((line) => {
      const match = /^(.*?\S) {2,}(\S.*)$/.exec(line);
      if (!match) throw new Error(`not a label and a value: '${line}'`);
      return [match[1]!, match[2]!];
    });
}

describe("the README's demo table", () => {
  it('is what the demo prints for ag-gemm, times and adapter aside', async () => {
    const { code, out, err } = await cli('run', 'ag-gemm');
    expect(code, err).toBe(0);
    const printed = rows(out);
    const shown = blockAfter(readRepoFile('README.md'), INTRO);
    const readme = rows(shown);

    expect(readme.map(([label]) => label)).toEqual(printed.map(([label]) => label));
    // What the README may differ in: a time for a time, and any adapter.
    const expected = printed.map(([label, value], i): [string, string] => {
      const theirs = readme[i]![1];
      if (label === 'adapter' || (TIME.test(value) && TIME.test(theirs))) return [label, theirs];
      return [label, value];
    });
    expect(readme).toEqual(expected);
    expect(shown).toBe(`${alignedTable(readme)}\n`);
  });
});
