import { randomBytes } from 'node:crypto';
import { decideRealmEmoji, type RealmEmojiCommand, type RealmEmojiState } from '../domain/realm-emoji/decider.js';
import { emojiByName } from '../markdown/index.js';
import { listRealmEmojiRows } from '../read/realm-emoji.js';
import type { RealmRow } from '../read/realm.js';
import type { UserRow } from '../read/users.js';
import type { FileStorage } from '../storage/index.js';
import { actorOf } from './channels.js';
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

/** POST /realm/emoji/{emoji_name}: validates, stores the bytes, then records the emoji (removing the bytes if that fails). */
export async function addRealmEmoji(
  ctx: ServiceContext,
  storage: FileStorage,
  meta: RequestMeta,
  user: UserRow,
  realm: RealmRow,
  name: string,
  files: readonly EmojiFile[],
): Promise<void> {
  const emoji_id = await ctx.commands.nextId('emoji_id_seq');
  const path_id = `${realm.id}/${randomBytes(1).toString('hex')}/${randomBytes(18).toString('base64url')}/emoji-${emoji_id}`;
  const command: RealmEmojiCommand = {
    type: 'AddRealmEmoji',
    actor: actorOf(user, realm, meta.now),
    emoji_id,
    name,
    files: files.map((f) => ({ content_type: f.mimetype, size: f.data.length })),
    max_size_mib: maxEmojiFileSizeMib(),
    path_id,
    overrides_builtin: emojiByName(name.trim().replace(/ /g, '_')) !== undefined,
  };
  // Validate before writing anything.
  decideRealmEmoji(command, await loadState(ctx, realm));
  const file = files[0]!;
  await storage.save(path_id, file.data, file.mimetype);
  try {
    await run(ctx, meta, realm, command);
  } catch (error) {
    await storage.remove(path_id).catch(() => undefined);
    throw error;
  }
}

/** DELETE /realm/emoji/{emoji_name}: deactivates; the image stays for old messages. */
export async function deactivateRealmEmoji(ctx: ServiceContext, meta: RequestMeta, user: UserRow, realm: RealmRow, name: string): Promise<void> {
  await run(ctx, meta, realm, { type: 'DeactivateRealmEmoji', actor: actorOf(user, realm, meta.now), name });
}
