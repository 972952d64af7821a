import { createHash } from 'node:crypto';

export const GENESIS_HASH = '0'.repeat(64);

/** An array or object whose members are still being written. */
interface Open {
  close: ']' | '}';
  array: readonly unknown[] | null;
  object: Record<string, unknown> | null;
  keys: readonly string[];
  next: number;
}

/**
 * JSON with object keys sorted at every level: the same value always gives the same bytes.
 * Iterative, so any nesting depth the database accepts hashes (a recursive walk overflowed the
 * stack at a few thousand levels, and one such event would have broken verify and import forever).
 * The bytes are those of the recursive version it replaced, which every stored hash was made with:
 * undefined members of objects are left out, anything JSON cannot say is `null`, keys sort by code unit.
 */
export function canonicalJson(value: unknown): string {
  let out = '';
  const open: Open[] = [];
  let pending = true;
  let current: unknown = value;
  for (;;) {
    if (pending) {
      pending = false;
      if (current === null || typeof current !== 'object') {
        out += JSON.stringify(current) ?? 'null';
      } else if (Array.isArray(current)) {
        out += '[';
        open.push({ close: ']', array: current, object: null, keys: [], next: 0 });
      } else {
        const object = current as Record<string, unknown>;
        const keys = Object.keys(object).filter((key) => object[key] !== undefined).sort();
        out += '{';
        open.push({ close: '}', array: null, object, keys, next: 0 });
      }
    }
    const top = open[open.length - 1];
    if (!top) return out;
    const length = top.array ? top.array.length : top.keys.length;
    if (top.next >= length) {
      out += top.close;
      open.pop();
      continue;
    }
    const index = top.next++;
    if (index > 0) out += ',';
    if (top.array) {
      // A hole in a sparse array: Array.prototype.map skipped it and join wrote nothing.
      if (!(index in top.array)) continue;
      current = top.array[index];
    } else {
      const key = top.keys[index]!;
      out += `${JSON.stringify(key)}:`;
      current = top.object![key];
    }
    pending = true;
  }
}
/**
 * How a row's body digest is made. 1: the rows written before migration 0160 (recorded_at not
 * covered; they keep verifying with that formula). 2: the digest also covers recorded_at and the
 * version itself. A log never goes back to a lower version (verify checks it).
 */
export const CURRENT_HASH_VERSION = 2;

export interface HashedFields {
  position: number;
  event_id: string;
  stream_id: string;
  stream_version: number;
  type: string;
  schema_version: number;
  data: unknown;
  metadata: unknown;
  /** Absent: 1. */
  hash_version?: number;
  /** Version 2: the time the log recorded the row, as recordedAtText writes it (microseconds, UTC). */
  recorded_at?: string;
}

/** Digest of what an event says, without its place in the log (known only under the append lock). */
export function bodyDigest(event: Omit<HashedFields, 'position' | 'stream_version'>): string {
  const version = event.hash_version ?? 1;
  if (version !== 1 && version !== 2) throw new Error(`unknown hash version ${version}`);
  const body: Record<string, unknown> = {
    event_id: event.event_id,
    stream_id: event.stream_id,
    type: event.type,
    schema_version: event.schema_version,
    data: event.data,
    metadata: event.metadata,
  };
  if (version === 2) {
    if (typeof event.recorded_at !== 'string') throw new Error('a version 2 row needs its recorded_at');
    body.hash_version = 2;
    body.recorded_at = event.recorded_at;
  }
  return createHash('sha256').update(canonicalJson(body)).digest('hex');
}

/** The chain link, exactly as the append functions compute it (migrations/0160). */
export function chainHash(prevHash: string, event: HashedFields): string {
  return createHash('sha256')
    .update(`${prevHash}:${event.position}:${event.stream_version}:${bodyDigest(event)}`)
    .digest('hex');
}
