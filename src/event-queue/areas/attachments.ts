import type { DataOf } from '../../domain/events.js';
import { registerTranslator } from '../translators.js';
import type { Db } from '../../db/database.js';
import { listAttachments, pathIdOfUploadPath, realmUploadSpaceUsed } from '../../read/attachments.js';
import type { ClientEvent, PreparedEvent } from '../types.js';

// attachment events go to the uploader only. There is no /register section for them (as in the
// real server, clients fetch GET /attachments).
registerTranslator('AttachmentUploaded', async (event) => {
  const d = event.data as DataOf<'AttachmentUploaded'>;
  return {
    audience: new Set([d.owner_id]),
    forUser: () => [{
      type: 'attachment',
      op: 'add',
      attachment: { id: d.attachment_id, name: d.name, path_id: d.path_id, size: d.size, create_time: d.create_time, messages: [] },
      upload_space_used: d.upload_space_used,
    }],
  };
});

registerTranslator('AttachmentDeleted', async (event) => {
  const d = event.data as DataOf<'AttachmentDeleted'>;
  return {
    audience: new Set([d.owner_id]),
    forUser: () => [{ type: 'attachment', op: 'remove', attachment: { id: d.attachment_id }, upload_space_used: d.upload_space_used }],
  };
});

/**
 * A message linking uploads: each file's owner gets an attachment update with the file's
 * messages. The list is read when the event is first prepared (there is no /register state for
 * attachments, so a later read that already includes newer links only shows them early).
 */
async function linkUpdates(db: Db, realmId: number, paths: readonly string[] | null): Promise<PreparedEvent | null> {
  const pathIds = [...new Set((paths ?? []).map(pathIdOfUploadPath).filter((p): p is string => p !== null))];
  if (pathIds.length === 0) return null;
  const rows = await db.selectFrom('attachments').selectAll().where('realm_id', '=', realmId).where('path_id', 'in', pathIds).execute();
  if (rows.length === 0) return null;
  const owners = new Set(rows.map((r) => r.owner_id));
  const byOwner = new Map<number, ClientEvent[]>();
  const space = await realmUploadSpaceUsed(db, realmId);
  for (const owner of owners) {
    const listed = (await listAttachments(db, owner)).filter((a) => rows.some((r) => r.id === a.id));
    byOwner.set(owner, listed.map((attachment) => ({ type: 'attachment', op: 'update', attachment, upload_space_used: space })));
  }
  return { audience: owners, forUser: (r) => byOwner.get(r.user.id) ?? [] };
}

registerTranslator('MessageSent', async (event, db) => {
  const d = event.data as DataOf<'MessageSent'>;
  return linkUpdates(db, d.realm_id, d.attachment_paths);
});

registerTranslator('MessageEdited', async (event, db) => {
  const d = event.data as DataOf<'MessageEdited'>;
  return linkUpdates(db, d.realm_id, d.attachment_paths);
});
