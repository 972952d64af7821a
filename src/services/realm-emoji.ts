import { randomBytes } from 'node:crypto';
import { decideRealmEmoji, type RealmEmojiCommand, type RealmEmojiState } from '../domain/realm-emoji/decider.js';
import { unicodeEmojiByName } from '../emoji/catalogue.js';
import { listRealmEmojiRows, originalPathId } from '../read/realm-emoji.js';
import type { RealmRow } from '../read/realm.js';
import type { UserRow } from '../read/users.js';
import type { FileStorage } from '../storage/index.js';
import { actorOf } from './channels.js';
import { emojiContentType, prepareEmojiImage } from './realm-emoji-image.js';
import { metadataOf, type RequestMeta, type ServiceContext } from './context.js';
import { streamVersion } from './stream-version.js';

/** One stream per realm: names are unique among a realm's active emoji. */
export const realmEmojiStream = (realmId: number) => `realm-emoji-${realmId}`;

/** MAX_EMOJI_FILE_SIZE_MIB (default 5, as on the real server). */
export function maxEmojiFileSizeMib(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.MAX_EMOJI_FILE_SIZE_MIB;
  if (raw === undefined || raw === '') return 5;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0) throw new Error(`MAX_EMOJI_FILE_SIZE_MIB must be a non-negative number, got "${raw}"`);
  return n;
}

export interface EmojiFile {
  mimetype: string;
  data: Buffer;
}

async function loadState(ctx: ServiceContext, realm: RealmRow): Promise<RealmEmojiState> {
  return {
    realm_id: realm.id,
    emoji: await listRealmEmojiRows(ctx.db, realm.id),
    add_custom_emoji_policy: Number((realm.properties as Record<string, unknown>).add_custom_emoji_policy ?? 1),
  };
}

async function run(ctx: ServiceContext, meta: RequestMeta, realm: RealmRow, command: RealmEmojiCommand): Promise<void> {
  await ctx.commands.run(metadataOf(meta), async () => {
    const streamId = realmEmojiStream(realm.id);
    const version = await streamVersion(ctx, streamId);
    const events = decideRealmEmoji(command, await loadState(ctx, realm));
    return { appends: [{ streamId, expectedVersion: version === 0 ? -1 : version, events }], result: undefined };
  });
}

/**
 * POST /realm/emoji/{emoji_name}: validates, stores the bytes (the image resized to fit 64x64, the
 * original upload and, for an animated image, a still PNG of its first frame), then records the
 * emoji (removing the bytes if that fails).
 */
export async function addRealmEmoji(
  ctx: ServiceContext,
  storage: FileStorage,
  meta: RequestMeta,
  user: UserRow,
  realm: RealmRow,
  name: string,
  uploaded: readonly EmojiFile[],
): Promise<void> {
  const files = await Promise.all(uploaded.map(async (f) => ({ ...f, mimetype: await emojiContentType(f.mimetype, f.data) })));
  const emoji_id = await ctx.commands.nextId('emoji_id_seq');
  const path_id = `${realm.id}/${randomBytes(1).toString('hex')}/${randomBytes(18).toString('base64url')}/emoji-${emoji_id}`;
  const command: RealmEmojiCommand = {
    type: 'AddRealmEmoji',
    actor: actorOf(user, realm, meta.now),
    actor_is_bot: user.is_bot,
    emoji_id,
    name,
    files: files.map((f) => ({ content_type: f.mimetype, size: f.data.length })),
    max_size_mib: maxEmojiFileSizeMib(),
    path_id,
    still_path_id: null,
    overrides_builtin: unicodeEmojiByName(name.trim().replace(/ /g, '_')) !== undefined,
  };
  // Validate before reading the image (the real server's order of errors) and before writing anything.
  decideRealmEmoji(command, await loadState(ctx, realm));
  const file = files[0]!;
  const image = await prepareEmojiImage(file.data, file.mimetype);
  const still_path_id = image.still ? `${path_id}-still.png` : null;
  const stored: Array<{ pathId: string; data: Buffer; type: string }> = [
    { pathId: originalPathId(path_id), data: file.data, type: file.mimetype },
    { pathId: path_id, data: image.data, type: file.mimetype },
  ];
  if (image.still && still_path_id) stored.push({ pathId: still_path_id, data: image.still, type: 'image/png' });
  const written: string[] = [];
  try {
    for (const f of stored) {
      written.push(f.pathId);
      await storage.save(f.pathId, f.data, f.type);
    }
    await run(ctx, meta, realm, { ...command, still_path_id });
  } catch (error) {
    for (const pathId of written) await storage.remove(pathId).catch(() => undefined);
    throw error;
  }
}

/** DELETE /realm/emoji/{emoji_name}: deactivates; the image stays for old messages. */
export async function deactivateRealmEmoji(ctx: ServiceContext, meta: RequestMeta, user: UserRow, realm: RealmRow, name: string): Promise<void> {
  await run(ctx, meta, realm, { type: 'DeactivateRealmEmoji', actor: actorOf(user, realm, meta.now), name });
}
