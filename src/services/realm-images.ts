import { createHash } from 'node:crypto';
import { loadSharp } from './sharp-loader.js';
import { errors } from '../domain/errors.js';
import type { RealmImageChanged } from '../domain/realm-admin/events.js';
import { ORGANIZATION_ICON_PATH, ORGANIZATION_LOGO_PATH } from '../domain/realm/server-catalogs.js';
import type { RealmRow } from '../read/realm.js';
import type { FileStorage } from '../storage/index.js';
import { realmStream } from './bootstrap.js';
import { metadataOf, type RequestMeta, type ServiceContext } from './context.js';
import { IMAGE_BOMB_TOTAL_PIXELS } from './realm-emoji-image.js';
import { streamVersion } from './stream-version.js';

export type RealmImage = RealmImageChanged['data']['image'];

/** The real server's MAX_ICON_FILE_SIZE_MIB and MAX_LOGO_FILE_SIZE_MIB (/register reports both). */
export const MAX_REALM_IMAGE_FILE_SIZE_MIB = 5;
/** The real server keeps icons as 100x100 squares and logos within 800x100. */
const ICON_SIZE = 100;
const LOGO_WIDTH = 800;
const LOGO_HEIGHT = 100;

export const UPLOADED = 'U';
/** What each image falls back to: the icon is generated ('G'), logos are the default ('D'). */
export const DEFAULT_SOURCE: Readonly<Record<RealmImage, string>> = { icon: 'G', logo: 'D', night_logo: 'D' };

/** Storage path of one version of an image, derived like avatars': a new upload never overwrites an old one. */
export function realmImagePathId(realmId: number, image: RealmImage, version: number): string {
  const digest = createHash('sha256').update(`realm-image:${realmId}:${image}:${version}`).digest();
  return `${realmId}/${digest.subarray(0, 1).toString('hex')}/${digest.subarray(1, 19).toString('base64url')}/${image}.png`;
}

function state(realm: RealmRow, image: RealmImage): { source: string; version: number } {
  const properties = realm.properties as Record<string, unknown>;
  return {
    source: typeof properties[`${image}_source`] === 'string' ? (properties[`${image}_source`] as string) : DEFAULT_SOURCE[image],
    version: typeof properties[`${image}_version`] === 'number' ? (properties[`${image}_version`] as number) : 0,
  };
}

/** The URL clients load an image from: the uploaded one (by version) or the server's default. */
export function realmImageUrl(realm: RealmRow, image: RealmImage, source = state(realm, image).source, version = state(realm, image).version): string {
  if (source === UPLOADED) return `${realm.url}/user_avatars/${realm.id}/realm/${image}.png?version=${version}`;
  return `${realm.url}${image === 'icon' ? ORGANIZATION_ICON_PATH : ORGANIZATION_LOGO_PATH}`;
}

/** The /register keys of the three images. */
export function realmImageState(realm: RealmRow): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const image of ['icon', 'logo', 'night_logo'] as const) {
    out[`realm_${image}_url`] = realmImageUrl(realm, image);
    out[`realm_${image}_source`] = state(realm, image).source;
  }
  return out;
}

/** The stored form of an upload: a PNG, resized as the real server does. */
async function processImage(image: RealmImage, data: Buffer): Promise<Buffer> {
  const sharp = await loadSharp();
  try {
    const input = sharp(data, { limitInputPixels: IMAGE_BOMB_TOTAL_PIXELS });
    const resized = image === 'icon'
      ? input.resize(ICON_SIZE, ICON_SIZE, { fit: 'cover' })
      : input.resize(LOGO_WIDTH, LOGO_HEIGHT, { fit: 'inside', withoutEnlargement: true });
    return await resized.png().toBuffer();
  } catch {
    throw errors.badRequest('Could not decode image; did you upload an image file?');
  }
}

async function changeImage(ctx: ServiceContext, meta: RequestMeta, image: RealmImage, source: string, beforeAppend: (version: number) => Promise<void>): Promise<void> {
  await ctx.commands.run(metadataOf(meta), async () => {
    const streamId = realmStream(meta.realmId);
    const version = await streamVersion(ctx, streamId);
    const realm = await ctx.db.selectFrom('realms').selectAll().where('id', '=', meta.realmId).executeTakeFirstOrThrow();
    const current = state(realm, image);
    const next = current.version + 1;
    // The bytes are written (under the new version's path) before the event that names them.
    await beforeAppend(next);
    const event: RealmImageChanged = { type: 'RealmImageChanged', data: { realm_id: meta.realmId, image, source, version: next } };
    return { appends: [{ streamId, expectedVersion: version, events: [event] }], result: undefined };
  });
}

export async function uploadRealmImage(ctx: ServiceContext, storage: FileStorage, meta: RequestMeta, image: RealmImage, data: Buffer): Promise<void> {
  if (data.length > MAX_REALM_IMAGE_FILE_SIZE_MIB * 1024 * 1024) {
    throw errors.badRequest(`Uploaded file is larger than the allowed limit of ${MAX_REALM_IMAGE_FILE_SIZE_MIB} MiB`);
  }
  const stored = await processImage(image, data);
  await changeImage(ctx, meta, image, UPLOADED, (version) => storage.save(realmImagePathId(meta.realmId, image, version), stored, 'image/png'));
}

export async function removeRealmImage(ctx: ServiceContext, meta: RequestMeta, image: RealmImage): Promise<void> {
  await changeImage(ctx, meta, image, DEFAULT_SOURCE[image], async () => undefined);
}
