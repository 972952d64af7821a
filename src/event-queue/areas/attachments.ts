import type { DataOf } from '../../domain/events.js';
import { registerTranslator } from '../translators.js';
import type { Db } from '../../db/database.js';
import { attachmentApi, pathIdOfUploadPath, realmUploadSpaceUsed } from '../../read/attachments.js';
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

// Only the owner's own DELETE /attachments/{id} is announced: as on the real server, the cleanup
// of files no message links (or never used) deletes them silently.
registerTranslator('AttachmentDeleted', async (event) => {
  const d = event.data as DataOf<'AttachmentDeleted'>;
  if (d.reason !== 'user') return null;
  return {
    audience: new Set([d.owner_id]),
    forUser: () => [{ type: 'attachment', op: 'remove', attachment: { id: d.attachment_id }, upload_space_used: d.upload_space_used }],
  };
});

/**
 * A message claiming uploads: as the real server's do_claim_attachments, its sender (who may
 * access each file, their own or not) gets an attachment update per file, with the messages
 * linking it now. An edit announces only the files the message did not link before; unlinking
 * announces nothing. The lists are read when the event is first prepared (there is no /register
 * state for attachments, so a later read that already includes newer links only shows them early).
 */
async function claimUpdates(db: Db, realmId: number, senderId: number, paths: readonly string[] | null, before: readonly string[] = []): Promise<PreparedEvent | null> {
  const linkedBefore = new Set(before);
  const pathIds = [...new Set((paths ?? []).map(pathIdOfUploadPath).filter((p): p is string => p !== null))].filter((p) => !linkedBefore.has(p));
  if (pathIds.length === 0) return null;
  const rows = await db.selectFrom('attachments').select('id').where('realm_id', '=', realmId).where('path_id', 'in', pathIds).orderBy('id').execute();
  if (rows.length === 0) return null;
  const space = await realmUploadSpaceUsed(db, realmId);
  const events: ClientEvent[] = [];
  for (const { id } of rows) {
    const attachment = await attachmentApi(db, id);
    if (attachment) events.push({ type: 'attachment', op: 'update', attachment, upload_space_used: space });
  }
  return { audience: new Set([senderId]), forUser: () => events };
}

registerTranslator('MessageSent', async (event, db) => {
  const d = event.data as DataOf<'MessageSent'>;
  return claimUpdates(db, d.realm_id, d.sender_id, d.attachment_paths);
});

registerTranslator('MessageEdited', async (event, db) => {
  const d = event.data as DataOf<'MessageEdited'>;
  return claimUpdates(db, d.realm_id, d.user_id, d.attachment_paths, d.prev_attachment_path_ids);
});
