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
export interface HashedFields {
  position: number;
  event_id: string;
  stream_id: string;
  stream_version: number;
  type: string;
  schema_version: number;
  data: unknown;
  metadata: unknown;
}

/** Digest of what an event says, without its place in the log (known only under the append lock). */
export function bodyDigest(event: Omit<HashedFields, 'position' | 'stream_version'>): string {
  const body = canonicalJson({
    event_id: event.event_id,
    stream_id: event.stream_id,
    type: event.type,
    schema_version: event.schema_version,
    data: event.data,
    metadata: event.metadata,
  });
  return createHash('sha256').update(body).digest('hex');
}

/** The chain link, exactly as the append_events function computes it (migrations/0005). */
export function chainHash(prevHash: string, event: HashedFields): string {
  return createHash('sha256')
    .update(`${prevHash}:${event.position}:${event.stream_version}:${bodyDigest(event)}`)
    .digest('hex');
}
