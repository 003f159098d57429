/** Lines of WGSL with indentation, so emitters read like the code they write. */
export class WgslWriter {
  private readonly lines: string[] = [];
  private depth = 0;

  line(text = ''): this {
    this.lines.push(text === '' ? '' : '  '.repeat(this.depth) + text);
    return this;
  }

  /** `head {`, the body one level in, `}`; an empty head opens a plain scope. */
  block(head: string, body: () => void): this {
    this.line(head === '' ? '{' : `${head} {`);
    this.depth++;
    body();
    this.depth--;
    return this.line('}');
  }

  toString(): string {
    return this.lines.join('\n') + '\n';
  }
}

/** A WGSL identifier from an IR name (which may be quoted text): other characters become `_`. */
export function identifier(prefix: string, name: string): string {
  return `${prefix}${name.replace(/[^A-Za-z0-9_]/g, '_')}`;
}

/**
 * Elements of a workgroup array rounded up to whole 16-byte words (`perWord` elements each): every
 * workgroup variable is a multiple of 16 bytes, because on NVIDIA's Vulkan driver a smaller one (a
 * lone u32) beside staged arrays left subgroup-matrix loads from them reading zeros (probe
 * `staged-loop+workgroup-u32` in benchmarks/src/subgroup-matrix-probe.ts).
 */
export function wholeWords(elements: number, perWord: number): number {
  return Math.ceil(elements / perWord) * perWord;
}
