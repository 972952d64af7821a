import type { Db } from '../db/database.js';
import { decideDrafts, type DraftCommand, type DraftInput, type RecipientCheck } from '../domain/drafts/decider.js';
import { draftIdsOf } from '../read/drafts.js';
import { apiEmail, getUserById } from '../read/users.js';
import { getRealm, realmHost } from '../read/realm.js';
import { canReadStreamContent, isSubscribed } from '../visibility.js';
import { metadataOf, type RequestMeta, type ServiceContext } from './context.js';
import { streamVersion } from './stream-version.js';

export const draftsStream = (userId: number) => `drafts-${userId}`;

/** Sync is on unless the user turned enable_drafts_synchronization off. */
async function syncEnabled(db: Db, userId: number): Promise<boolean> {
  const user = await getUserById(db, userId);
  return user?.settings.enable_drafts_synchronization !== false;
}

const MAX_ROW_ID = 2_147_483_647;

/** Looks up every channel and user the drafts name, so the pure decider can check them. */
async function recipientCheck(db: Db, userId: number, drafts: readonly DraftInput[]): Promise<RecipientCheck> {
  const author = await getUserById(db, userId);
  if (!author) throw new Error(`user ${userId} does not exist`);
  const viewer = { user_id: author.id, role: author.role, realm_id: author.realm_id };
  const channelIds = new Set<number>();
  const userIds = new Set<number>();
  for (const draft of drafts) {
    if (!draft || typeof draft !== 'object' || !Array.isArray(draft.to)) continue;
    // An id no row can have (past the id columns' range) is simply not found.
    const ids = (draft.to as unknown[]).filter((x): x is number => typeof x === 'number' && Number.isInteger(x) && x > 0 && x <= MAX_ROW_ID);
    for (const id of ids) (draft.type === 'stream' ? channelIds : userIds).add(id);
  }
  const okChannels = new Set<number>();
  if (channelIds.size > 0) {
    const streams = await db.selectFrom('streams').selectAll().where('id', 'in', [...channelIds]).execute();
    for (const stream of streams) {
      if (stream.deactivated) continue;
      if (canReadStreamContent(viewer, stream, await isSubscribed(db, author.id, stream.id))) okChannels.add(stream.id);
    }
  }
  const okUsers = new Set<number>();
  const deactivated = new Map<number, string>();
  if (userIds.size > 0) {
    const realm = await getRealm(db, author.realm_id);
    const users = await db.selectFrom('users').select('id').where('id', 'in', [...userIds]).where('realm_id', '=', author.realm_id).execute();
    for (const { id } of users) {
      okUsers.add(id);
      const user = await getUserById(db, id);
      if (user && !user.is_active && realm) deactivated.set(id, apiEmail(user, realmHost(realm)));
    }
  }
  return { channelOk: (id) => okChannels.has(id), userOk: (id) => okUsers.has(id), deactivatedEmail: (id) => deactivated.get(id) };
}

async function runDrafts<R>(
  ctx: ServiceContext,
  meta: RequestMeta,
  userId: number,
  build: () => Promise<DraftCommand>,
  result: R,
): Promise<R> {
  const command = await build();
  await ctx.commands.run(metadataOf(meta), async () => {
    const streamId = draftsStream(userId);
    const version = await streamVersion(ctx, streamId);
    const state = { user_id: userId, sync_enabled: await syncEnabled(ctx.db, userId), draft_ids: await draftIdsOf(ctx.db, userId) };
    const events = decideDrafts(command, state);
    return { appends: [{ streamId, expectedVersion: version === 0 ? -1 : version, events }], result: undefined };
  });
  return result;
}

const nowSeconds = (meta: RequestMeta) => Math.floor(meta.now.getTime() / 1000);

export async function createDrafts(ctx: ServiceContext, meta: RequestMeta, userId: number, drafts: DraftInput[]): Promise<number[]> {
  const recipients = await recipientCheck(ctx.db, userId, drafts);
  const ids: number[] = [];
  for (const _ of drafts) ids.push(await ctx.commands.nextId('draft_id_seq'));
  return runDrafts(ctx, meta, userId, async () => ({ type: 'CreateDrafts', drafts, ids, now: nowSeconds(meta), recipients }), ids);
}

export async function editDraft(ctx: ServiceContext, meta: RequestMeta, userId: number, draftId: number, draft: DraftInput): Promise<void> {
  const recipients = await recipientCheck(ctx.db, userId, [draft]);
  await runDrafts(ctx, meta, userId, async () => ({ type: 'EditDraft', draft_id: draftId, draft, now: nowSeconds(meta), recipients }), undefined);
}

export async function deleteDraft(ctx: ServiceContext, meta: RequestMeta, userId: number, draftId: number): Promise<void> {
  await runDrafts(ctx, meta, userId, async () => ({ type: 'DeleteDraft', draft_id: draftId }), undefined);
}

/**
 * Deletes every server-stored draft of the user, e.g. when enable_drafts_synchronization is turned
 * off (call it after that change committed). Clients get no event for these deletions: they keep
 * their local copies.
 */
export async function deleteAllDrafts(ctx: ServiceContext, meta: RequestMeta, userId: number): Promise<void> {
  await runDrafts(ctx, meta, userId, async () => ({ type: 'DeleteAllDrafts' }), undefined);
}
