import { createHash } from 'node:crypto';
import { fileTypeFromBuffer } from 'file-type';
import { errors } from '../domain/errors.js';
import { decideUser, type Actor } from '../domain/users/decider.js';
import type { UserRow } from '../read/users.js';
import type { RealmRow } from '../read/realm.js';
import type { FileStorage } from '../storage/index.js';
import { metadataOf, type RequestMeta, type ServiceContext } from './context.js';
import { uploadStorage } from './upload-crypto.js';
import { refuseErased, requireUser, toUserState, userStream } from './users.js';

/** The real server's MAX_AVATAR_FILE_SIZE_MIB; /register reports it as max_avatar_file_size_mib. */
export const MAX_AVATAR_FILE_SIZE_MIB = 5;
const IMAGE_TYPES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp', 'image/bmp', 'image/tiff']);

/**
 * Where the bytes of one avatar version live: derived from user and version, so the read table
 * needs no path column and an old version's file is never overwritten by a newer one.
 */
export function avatarPathId(realmId: number, userId: number, version: number): string {
  const digest = createHash('sha256').update(`avatar:${realmId}:${userId}:${version}`).digest();
  return `${realmId}/${digest.subarray(0, 1).toString('hex')}/${digest.subarray(1, 19).toString('base64url')}/avatar`;
}

/**
 * Where avatar images are kept: sealed at rest like uploads, each version under a key of its own
 * (`upload:<avatar path>`), which erasure destroys with the bytes (src/services/erasure.ts). An image
 * stored before this change (no magic prefix) is served as it is.
 */
export function avatarStorage(ctx: Pick<ServiceContext, 'config' | 'store' | 'db'>): FileStorage {
  return uploadStorage(ctx);
}

/** The image type the bytes really are, or null when they are not an image we serve. */
export async function avatarContentType(data: Buffer): Promise<string | null> {
  const type = await fileTypeFromBuffer(data);
  return type && IMAGE_TYPES.has(type.mime) ? type.mime : null;
}

export function avatarChangesDisabled(realm: RealmRow, user: UserRow): boolean {
  return realm.properties.avatar_changes_disabled === true && user.role > 200;
}

async function changeAvatar(
  ctx: ServiceContext,
  meta: RequestMeta,
  actor: Actor,
  userId: number,
  source: 'G' | 'U',
  beforeAppend: (version: number) => Promise<void>,
): Promise<UserRow> {
  await ctx.commands.run(metadataOf(meta), async () => {
    const row = await requireUser(ctx.db, userId, meta.realmId);
    await refuseErased(ctx.db, userId);
    const state = toUserState(row);
    const events = decideUser({ type: 'ChangeAvatar', actor, avatar_source: source }, state);
    // The bytes are written (under the new version's path) before the event that names them.
    for (const event of events) if (event.type === 'UserAvatarChanged') await beforeAppend(event.data.avatar_version);
    return { appends: [{ streamId: userStream(userId), expectedVersion: row.version, events }], result: undefined };
  });
  return requireUser(ctx.db, userId, meta.realmId);
}

/** Stores an uploaded avatar image and switches the user to it. */
export async function uploadAvatar(
  ctx: ServiceContext,
  storage: FileStorage,
  meta: RequestMeta,
  actor: Actor,
  userId: number,
  data: Buffer,
): Promise<UserRow> {
  if (data.length > MAX_AVATAR_FILE_SIZE_MIB * 1024 * 1024) {
    throw errors.badRequest(`Uploaded file is larger than the allowed limit of ${MAX_AVATAR_FILE_SIZE_MIB} MiB`);
  }
  const type = await avatarContentType(data);
  if (!type) throw errors.badRequest('Could not decode image; did you upload an image file?');
  return changeAvatar(ctx, meta, actor, userId, 'U', (version) => storage.save(avatarPathId(meta.realmId, userId, version), data, type));
}

/** Back to the external (Gravatar) avatar. */
export async function removeAvatar(ctx: ServiceContext, meta: RequestMeta, actor: Actor, userId: number): Promise<UserRow> {
  return changeAvatar(ctx, meta, actor, userId, 'G', async () => undefined);
}
