import { createHash } from 'node:crypto';

export const GENESIS_HASH = '0'.repeat(64);

/** JSON with object keys sorted at every level: the same value always gives the same bytes. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const entries = Object.keys(value as Record<string, unknown>)
    .filter((key) => (value as Record<string, unknown>)[key] !== undefined)
    .sort()
    .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`);
  return `{${entries.join(',')}}`;
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
