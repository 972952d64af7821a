import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/** Longest client-supplied request id kept (a UUID is 36; tracing headers run to about 100). */
export const MAX_REQUEST_ID_LENGTH = 128;
/** Letters, digits and the punctuation tracing ids use (UUIDs, `Root=1-5759e988-bd86;Parent=...`). */
const REQUEST_ID = /^[A-Za-z0-9._:;=+/@-]+$/;

/**
 * The request's id, stored in the metadata of every event it appends and in its log lines: the
 * client's or proxy's `X-Request-Id` when it is a short plain token, else a fresh UUID (also
 * unique across restarts and replicas, unlike fastify's counter).
 */
export function requestIdOf(request: IncomingMessage): string {
  const header = request.headers['x-request-id'];
  const given = Array.isArray(header) ? header[0] : header;
  if (given && given.length <= MAX_REQUEST_ID_LENGTH && REQUEST_ID.test(given)) return given;
  return randomUUID();
}
