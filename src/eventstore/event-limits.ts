import { ApiError } from '../domain/errors.js';
import { jsonDepthExceeds } from './json-depth.js';

/**
 * The store's last guard on what enters the immutable log (docs/DECISIONS.md, "Limits"): requests
 * bound their own fields first; this refuses, before anything is appended, an event that slipped
 * past them. 8 MiB holds a topic move of about a million messages.
 */
export const MAX_EVENT_BYTES = 8 * 1024 * 1024;
/** Events are shallow records; nothing we write nests near this. */
export const MAX_EVENT_DEPTH = 64;

/** The event's data as stored (JSON text), or a 400 when it is too deep or too large. */
export function serializeEventData(type: string, data: unknown, metadataBytes: number): string {
  if (jsonDepthExceeds(data, MAX_EVENT_DEPTH)) {
    throw new ApiError('BAD_REQUEST', 400, `Event ${type} is nested too deeply (limit: ${MAX_EVENT_DEPTH} levels)`);
  }
  const json = JSON.stringify(data);
  // A UTF-16 unit takes at most 3 UTF-8 bytes: count exactly only when it could matter.
  const bytes = (json.length * 3 > MAX_EVENT_BYTES ? Buffer.byteLength(json) : json.length) + metadataBytes;
  if (bytes > MAX_EVENT_BYTES) {
    throw new ApiError('BAD_REQUEST', 400, `Event ${type} is too large (${bytes} bytes; limit: ${MAX_EVENT_BYTES})`);
  }
  return json;
}
