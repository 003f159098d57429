/**
 * The tune cache: `tune` results in a JSON file keyed by `tuneKey`, so `bench --tuned` starts from
 * a choice without timing again. Node only (the file system).
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import type { TuneResult } from '../autotune.js';

/** The cache file: `$SYNCOPATE_CACHE_DIR`, else `$XDG_CACHE_HOME/syncopate`, else `~/.cache/syncopate`; `tune.json` in it. */
export function defaultTuneCacheFile(env: Readonly<Record<string, string | undefined>> = process.env): string {
  const dir = env.SYNCOPATE_CACHE_DIR ?? join(env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'syncopate');
  return join(dir, 'tune.json');
}

/** Entries by key; a missing or unreadable file is an empty cache (it is only a cache). */
export class TuneCache {
  private constructor(
    readonly file: string,
    private readonly entries: Record<string, TuneResult>,
  ) {}

  static open(file = defaultTuneCacheFile()): TuneCache {
    let entries: Record<string, TuneResult> = {};
    try {
      const parsed: unknown = JSON.parse(readFileSync(file, 'utf8'));
      if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) entries = parsed as Record<string, TuneResult>;
    } catch {
      // absent or corrupt: start empty, the next store rewrites it
    }
    return new TuneCache(file, entries);
  }

  get(key: string): TuneResult | undefined {
    return Object.hasOwn(this.entries, key) ? this.entries[key] : undefined;
  }

  /** Stores and writes the file (through a temporary file, so a crash never leaves half of it). */
  put(result: TuneResult): void {
    this.entries[result.key] = result;
    mkdirSync(dirname(this.file), { recursive: true });
    const temporary = `${this.file}.${process.pid}.tmp`;
    writeFileSync(temporary, `${JSON.stringify(this.entries, null, 2)}\n`);
    renameSync(temporary, this.file);
  }
}

