/**
 * Keeps code in the docs honest: a doc's code block must equal a marked region of a test file,
 * which type-checks and runs in CI.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const repoRoot = new URL('../../../', import.meta.url);

export function readRepoFile(path: string): string {
  return readFileSync(fileURLToPath(new URL(path, repoRoot)), 'utf8');
}

/** The text between `// #region name` and `// #endregion name` in `source`. */
export function region(source: string, name: string): string {
  const match = new RegExp(`// #region ${name}\\n([\\s\\S]*?)// #endregion ${name}`).exec(source);
  if (!match) throw new Error(`no region '${name}'`);
  return match[1]!;
}

/** The body of the first fenced code block after `<!-- code: testFile#name -->` in `markdown`. */
export function docCodeBlock(markdown: string, testFile: string, name: string): string {
  const marker = `<!-- code: ${testFile}#${name} -->`;
  const at = markdown.indexOf(marker);
  if (at < 0) throw new Error(`no '${marker}' in the doc`);
  const match = /```[a-z]*\n([\s\S]*?)```/.exec(markdown.slice(at));
  if (!match) throw new Error(`no code block after '${marker}'`);
  return match[1]!;
}
