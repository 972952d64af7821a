import { sql } from 'kysely';
import type { StreamAppend } from '../eventstore/types.js';
import type { Db } from '../db/database.js';
import { errors } from '../domain/errors.js';
import type { UserErased } from '../domain/forgetting/events.js';
import { Role } from '../domain/roles.js';
import { legacyUploadKeyId, scheduledMessageKeyId, userKeyId } from '../eventstore/crypto/personal-fields.js';
import { getRealm, realmHost, type RealmRow } from '../read/realm.js';
import { countActiveOwners, type UserRow } from '../read/users.js';
import { metadataOf, type RequestMeta, type ServiceContext } from './context.js';
import { shredMessages, vacuumForgotten } from './forgetting.js';
import { fullMembersAppends } from './full-members.js';
import { isErased, requireUser, userStream } from './users.js';
import { removeUploadBytes, uploadKeyId } from './upload-crypto.js';
import { avatarPathId } from './avatars.js';
import { removeZuliprcFilesOf } from './zuliprc-files.js';
import { pruneStoredExportKeys } from './realm-exports.js';

export type ErasedMessages = 'shred' | 'keep';

export interface ErasureResult {
  user_id: number;
  /** messages whose keys were destroyed with the person */
  messages_shredded: number;
  /** messages kept because a legal hold covers their channel */
  messages_held: number;
}

/** The real server's deleted user (do_delete_user): `Deleted User <id>`, `deleteduser<id>@<host>`. */
export function deletedUserName(userId: number): string {
  return `Deleted User ${userId}`;
}

export function deletedUserEmail(userId: number, realm: RealmRow): string {
  return `deleteduser${userId}@${realmHost(realm).split(':')[0]!}`;
}

/** Messages `userId` sent, live or deleted and waiting for their grace period. */
async function messagesSentBy(db: Db, realmId: number, userId: number): Promise<number[]> {
  const { rows } = await sql<{ id: number }>`
    SELECT id FROM messages WHERE realm_id = ${realmId} AND sender_id = ${userId}
    UNION
    SELECT p.message_id AS id FROM pending_shreds p
      JOIN events e ON e.stream_id = 'message-' || p.message_id::text AND e.stream_version = 1
      WHERE p.realm_id = ${realmId} AND (e.data->>'sender_id')::int = ${userId}
    ORDER BY id`.execute(db);
  return rows.map((row) => Number(row.id));
}

/**
 * Erases a person (GDPR article 17): destroys the data key their identity fields are sealed under,
 * the keys and bytes of their uploads, and, when `messages` is 'shred', the keys of the messages they
 * sent; then records it as a UserErased event (who and when in its metadata, why in `reason`, which
 * keys; never the forgotten values). Afterwards the API shows them as the real server shows a deleted
 * user. Refused for a person on legal hold, for the only owner, and for a system bot; messages in a
 * held channel are kept. Keys go first: killed in between, running it again finishes the job.
 * `actor` null: the CLI (the operator).
 */
export async function eraseUser(
  ctx: ServiceContext,
  meta: RequestMeta,
  actor: Pick<UserRow, 'role'> | null,
  userId: number,
  options: { messages: ErasedMessages; reason?: string | null },
): Promise<ErasureResult> {
  if (actor && actor.role !== Role.OWNER) throw errors.mustBeOwner();
  const realm = await getRealm(ctx.db, meta.realmId);
  if (!realm) throw errors.badRequest('Invalid organization');
  if (!Number.isInteger(userId) || userId <= 0 || userId > 2_147_483_647) throw errors.noSuchUser();
  const user = await requireUser(ctx.db, userId, meta.realmId);
  if (user.is_system_bot) throw errors.noSuchUser();
  if (await isErased(ctx.db, userId)) throw errors.badRequest('User has already been erased');
  if (user.role === Role.OWNER && user.is_active && !user.is_bot && (await countActiveOwners(ctx.db, meta.realmId)) <= 1) {
    throw errors.badRequest('Cannot deactivate the only organization owner');
  }
  const held = await ctx.db.selectFrom('legal_holds').select('subject_id')
    .where('realm_id', '=', meta.realmId).where('scope', '=', 'user').where('subject_id', '=', userId).executeTakeFirst();
  if (held) throw errors.badRequest('This user is under legal hold and cannot be erased');

  let shredded = 0;
  let sent: number[] = [];
  if (options.messages === 'shred') {
    sent = await messagesSentBy(ctx.db, meta.realmId, userId);
    shredded = await shredMessages(ctx, meta, meta.realmId, sent, 'erasure');
  }
  const uploads = await ctx.db.selectFrom('attachments').select('path_id').where('owner_id', '=', userId).where('realm_id', '=', meta.realmId).execute();
  // Every avatar version they uploaded has its own path and key.
  const avatarPaths = Array.from({ length: user.avatar_version }, (_, i) => avatarPathId(meta.realmId, userId, i + 1));
  const uploadPaths = [...uploads.map((row) => row.path_id), ...avatarPaths];
  // Files stored before keys were named by digest have their key under the old name (which names the file).
  const legacy = await ctx.db.selectFrom('data_keys').select('key_id').where('key_id', 'in', ['', ...uploadPaths.map(legacyUploadKeyId)]).execute();
  const uploadKeyIds = [...uploadPaths.map(uploadKeyId), ...legacy.map((row) => row.key_id)];
  // Scheduled messages not yet delivered are theirs alone (a delivered one's text is its message's).
  const scheduled = await ctx.db.selectFrom('scheduled_messages').select('id').where('sender_id', '=', userId).where('delivered', '=', false).execute();
  const keyIds = [userKeyId(userId), ...scheduled.map((row) => scheduledMessageKeyId(row.id))];
  if (ctx.store.crypto) await ctx.store.crypto.keys.destroy([...keyIds, ...uploadKeyIds]);
  else await sql`DELETE FROM data_keys WHERE key_id = ANY(${[...keyIds, ...uploadKeyIds]}::text[])`.execute(ctx.db);
  await removeUploadBytes(ctx, uploadPaths);
  await removeZuliprcFilesOf(ctx.config.dataDir, [user.email, user.delivery_email]);
  await pruneStoredExportKeys(ctx);

  const reason = options.reason?.trim() ? options.reason.trim().slice(0, 1000) : null;
  const data = {
    realm_id: meta.realmId,
    user_id: userId,
    key_ids: keyIds,
    full_name: deletedUserName(userId),
    email: deletedUserEmail(userId, realm),
    messages: options.messages === 'shred' ? 'shredded' as const : 'kept' as const,
    upload_key_ids: uploadKeyIds,
    reason,
  };
  await ctx.commands.run(metadataOf(meta), async () => {
    const row = await requireUser(ctx.db, userId, meta.realmId);
    const event: UserErased = { type: 'UserErased', data: { ...data, avatar_version: row.avatar_version + 1 } };
    const appends: StreamAppend[] = [{ streamId: userStream(userId), expectedVersion: row.version, events: [event] }];
    // As when deactivating: their bots stop working with them.
    const bots = row.is_bot ? [] : await ctx.db.selectFrom('users').select(['id', 'version'])
      .where('bot_owner_id', '=', userId).where('is_bot', '=', true).where('is_active', '=', true).orderBy('id').execute();
    for (const bot of bots) appends.push({ streamId: userStream(bot.id), expectedVersion: bot.version, events: [{ type: 'UserDeactivated', data: { user_id: bot.id } }] });
    // An erased account is deactivated: it and its bots leave role:fullmembers.
    const leaving = [row.id, ...bots.map((bot) => bot.id)].map((id) => ({ user_id: id, role: row.role, is_active: false, date_joined: row.date_joined }));
    appends.push(...(await fullMembersAppends(ctx, meta.realmId, leaving, meta.now)));
    return { appends, result: undefined };
  });
  await vacuumForgotten(ctx.db, ['users', 'user_status', 'attachments', 'drafts', 'scheduled_messages']);
  return { user_id: userId, messages_shredded: shredded, messages_held: sent.length - shredded };
}
