import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import { errors } from '../domain/errors.js';
import type { LegalHoldChanged } from '../domain/forgetting/events.js';
import { Role } from '../domain/roles.js';
import type { UserRow } from '../read/users.js';
import { metadataOf, type RequestMeta, type ServiceContext } from './context.js';
import { isDbInt } from '../domain/ids.js';

export type HoldScope = 'channel' | 'user';

export interface LegalHold {
  scope: HoldScope;
  subject_id: number;
  reason: string | null;
  since: number;
}

async function requireSubject(db: Db, realmId: number, scope: HoldScope, id: number): Promise<void> {
  if (!isDbInt(id)) throw errors.badRequest(scope === 'channel' ? 'Invalid channel ID' : 'No such user');
  const found = scope === 'channel'
    ? await db.selectFrom('streams').select('id').where('id', '=', id).where('realm_id', '=', realmId).executeTakeFirst()
    : await db.selectFrom('users').select('id').where('id', '=', id).where('realm_id', '=', realmId).executeTakeFirst();
  if (!found) throw errors.badRequest(scope === 'channel' ? 'Invalid channel ID' : 'No such user');
}

/** Puts a channel or a person on legal hold (`held`), or lifts it. Owners only; the hold is an event. */
export async function setLegalHold(
  ctx: ServiceContext,
  meta: RequestMeta,
  actor: Pick<UserRow, 'role'> | null,
  realmId: number,
  hold: { scope: HoldScope; subjectId: number; held: boolean; reason?: string | null },
): Promise<void> {
  if (actor && actor.role !== Role.OWNER) throw errors.mustBeOwner();
  if (hold.scope !== 'channel' && hold.scope !== 'user') throw errors.badRequest(`Invalid scope: '${String(hold.scope)}'`);
  await requireSubject(ctx.db, realmId, hold.scope, hold.subjectId);
  const reason = hold.reason?.trim() ? hold.reason.trim().slice(0, 1000) : null;
  const event: LegalHoldChanged = { type: 'LegalHoldChanged', data: { realm_id: realmId, scope: hold.scope, subject_id: hold.subjectId, held: hold.held, reason } };
  await ctx.commands.run(metadataOf(meta), async () => ({
    appends: [{ streamId: `legal-holds-${realmId}`, expectedVersion: undefined, events: [event] }],
    result: undefined,
  }));
}

export async function listLegalHolds(db: Db, realmId: number): Promise<LegalHold[]> {
  const rows = await db.selectFrom('legal_holds').select(['scope', 'subject_id', 'reason', 'since']).where('realm_id', '=', realmId)
    .orderBy('scope').orderBy('subject_id').execute();
  return rows.map((row) => ({ ...row, since: Number(row.since) }));
}

/**
 * Which of `ids` are held: their channel (now, or when deleted) is held, or their sender or a
 * direct-message participant is. Sender and participants of a deleted message come from its
 * MessageSent event (those fields are not sealed).
 */
export async function heldMessageIds(db: Db, realmId: number, ids: readonly number[]): Promise<Set<number>> {
  if (ids.length === 0) return new Set();
  const any = await db.selectFrom('legal_holds').select('scope').where('realm_id', '=', realmId).limit(1).executeTakeFirst();
  if (!any) return new Set();
  const { rows } = await sql<{ id: number }>`
    WITH wanted AS (SELECT unnest(${[...ids]}::int8[]) AS id),
    facts AS (
      SELECT w.id,
             COALESCE(m.stream_id, p.stream_id, (e.data->>'stream_id')::int) AS stream_id,
             COALESCE(m.sender_id, (e.data->>'sender_id')::int) AS sender_id,
             e.data->'dm_user_ids' AS dm_user_ids
      FROM wanted w
      LEFT JOIN messages m ON m.id = w.id
      LEFT JOIN pending_shreds p ON p.message_id = w.id
      LEFT JOIN events e ON e.stream_id = 'message-' || w.id::text AND e.stream_version = 1
    )
    SELECT f.id FROM facts f WHERE EXISTS (
      SELECT 1 FROM legal_holds h WHERE h.realm_id = ${realmId} AND (
        (h.scope = 'channel' AND h.subject_id = f.stream_id)
        OR (h.scope = 'user' AND (h.subject_id = f.sender_id OR COALESCE(f.dm_user_ids, '[]'::jsonb) @> to_jsonb(h.subject_id)))))`.execute(db);
  return new Set(rows.map((row) => Number(row.id)));
}
