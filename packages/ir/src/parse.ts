/** The parser of the textual form. Stub; being written. */
import { IRParseError } from './errors.js';
import type { Module } from './types.js';

export function parse(_text: string): Module {
  throw new IRParseError(1, 1, 'module', 'a stub parser');
}
