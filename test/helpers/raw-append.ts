import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Db } from '../../src/db/database.js';
import { APPEND_LOCK_KEY } from '../../src/eventstore/event-store.js';
import { bodyDigest, CURRENT_HASH_VERSION } from '../../src/eventstore/hash.js';
import { nextRecordedAt } from '../../src/eventstore/recorded-at.js';

/** JSON text of an object nested `levels` times ({"k":[{"k":[ ... ]}]}), 2 levels per step. */
export function deepJsonText(levels: number): string {
  return `${'{"k":['.repeat(levels)}1${']}'.repeat(levels)}`;
}

/**
 * Appends one event as the log function stores it, past the store's own guards: a row such as a
 * version without them, or anyone who can write the table, could have written. Its hash is correct.
 * `dataText` is the data's JSON text, hashed as read back.
 */
export async function appendRaw(db: Db, streamId: string, type: string, dataText: string, realmId = 1): Promise<void> {
  const eventId = randomUUID();
  const metadata = { actor_id: null, realm_id: realmId, client: 'test', request_id: randomUUID(), time: new Date().toISOString() };
  const recordedAt = nextRecordedAt();
  const digest = bodyDigest({
    event_id: eventId, stream_id: streamId, type, schema_version: 1, data: JSON.parse(dataText), metadata,
    hash_version: CURRENT_HASH_VERSION, recorded_at: recordedAt,
  });
  await sql`SELECT * FROM append_event(${APPEND_LOCK_KEY}::bigint, 0::int, ${streamId}::text, NULL::int, ${eventId}::uuid,
    ${type}::text, 1::int, ${dataText}::jsonb, ${JSON.stringify(metadata)}::jsonb, ${digest}::text,
    ${recordedAt}::timestamptz, ${CURRENT_HASH_VERSION}::smallint)`.execute(db);
}
