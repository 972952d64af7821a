import { canonicalJson } from './hash.js';

/**
 * JSON.stringify for values read back from the log, which may nest deeper than V8's recursive
 * JSON.stringify can go (it throws RangeError at a few thousand levels). Such a value is written
 * by the iterative canonical writer instead: the same JSON value, with its keys sorted.
 */
export function jsonText(value: unknown): string {
  try {
    return JSON.stringify(value);
  } catch (error) {
    if (error instanceof RangeError) return canonicalJson(value);
    throw error;
  }
}
