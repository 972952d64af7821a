import type { Db } from '../db/database.js';
import { avatarPathId } from './avatars.js';
import { realmImagePathId, UPLOADED } from './realm-images.js';
import { originalPathId } from '../read/realm-emoji.js';
import { EXPORT_FILE_SUFFIXES } from '../read/realm-exports.js';
import type { RealmImage } from './realm-images.js';

export interface ReferencedFile {
  pathId: string;
  contentType: string;
  /** A file that exists only in some set-ups (an export's .keys and .signatures); its absence is no loss. */
  optional?: boolean;
}

const REALM_IMAGES: readonly RealmImage[] = ['icon', 'logo', 'night_logo'];

/** Every file the read tables name: uploads, current avatars, custom emoji, realm icon and logos, exports. */
export async function* referencedFiles(db: Db): AsyncGenerator<ReferencedFile> {
  for (const row of await db.selectFrom('attachments').select(['path_id', 'content_type']).orderBy('id').execute()) {
    yield { pathId: row.path_id, contentType: row.content_type };
  }
  const avatars = await db.selectFrom('users').select(['id', 'realm_id', 'avatar_version']).where('avatar_source', '=', UPLOADED).orderBy('id').execute();
  for (const user of avatars) yield { pathId: avatarPathId(user.realm_id, user.id, user.avatar_version), contentType: 'application/octet-stream' };
  for (const emoji of await db.selectFrom('realm_emoji').select(['path_id', 'content_type', 'still_path_id']).orderBy('id').execute()) {
    yield { pathId: emoji.path_id, contentType: emoji.content_type };
    yield { pathId: originalPathId(emoji.path_id), contentType: emoji.content_type, optional: true };
    if (emoji.still_path_id) yield { pathId: emoji.still_path_id, contentType: 'image/png' };
  }
  for (const realm of await db.selectFrom('realms').select(['id', 'properties']).orderBy('id').execute()) {
    const properties = (realm.properties ?? {}) as Record<string, unknown>;
    for (const image of REALM_IMAGES) {
      if (properties[`${image}_source`] !== UPLOADED) continue;
      yield { pathId: realmImagePathId(realm.id, image, Number(properties[`${image}_version`])), contentType: 'image/png' };
    }
  }
  const exports = await db.selectFrom('realm_exports').select('path_id').where('deleted_timestamp', 'is', null).where('path_id', 'is not', null).orderBy('id').execute();
  for (const row of exports) {
    for (const suffix of EXPORT_FILE_SUFFIXES) yield { pathId: `${row.path_id!}${suffix}`, contentType: 'application/octet-stream', optional: suffix !== '' };
  }
}
