import { sql } from 'kysely';
import type { Trx } from '../src/projections-api.js';
import type { DataOf } from '../src/domain/events.js';
import { pathIdOfUploadPath } from '../src/read/attachments.js';
import { runPrepared } from '../src/db/prepared.js';
import { defineProjection, type HandlerResult, type RunEvent } from './define.js';

/** Files whose last linking message went away are marked orphaned: the cleanup job deletes them (and their keys). */
async function unlinkMessages(trx: Trx, messageIds: readonly number[]): Promise<void> {
  if (messageIds.length === 0) return;
  const touched = await trx.selectFrom('attachment_messages').select('attachment_id').distinct().where('message_id', 'in', messageIds).execute();
  if (touched.length === 0) return;
  await trx.deleteFrom('attachment_messages').where('message_id', 'in', messageIds).execute();
  const ids = touched.map((t) => t.attachment_id);
  // Files whose last linking message went away: the cleanup job deletes them.
  await trx
    .updateTable('attachments')
    .set({ orphaned: true })
    .where('id', 'in', ids)
    .where(({ not, exists, selectFrom }) =>
      not(exists(selectFrom('attachment_messages as l').select('l.message_id').whereRef('l.attachment_id', '=', 'attachments.id'))))
    .execute();
}

/** Links a message to the realm's uploads its content names. */
async function link(trx: Trx, realmId: number, messageId: number, dateSentMs: number, paths: readonly string[]): Promise<void> {
  const pathIds = [...new Set(paths.map(pathIdOfUploadPath).filter((p): p is string => p !== null))];
  if (pathIds.length === 0) return;
  const found = await trx.selectFrom('attachments').select('id').where('realm_id', '=', realmId).where('path_id', 'in', pathIds).execute();
  if (found.length === 0) return;
  await trx
    .insertInto('attachment_messages')
    .values(found.map((a) => ({ attachment_id: a.id, message_id: messageId, date_sent: dateSentMs })))
    .onConflict((oc) => oc.doNothing())
    .execute();
  await trx.updateTable('attachments').set({ orphaned: false }).where('id', 'in', found.map((a) => a.id)).execute();
}

type Edit = DataOf<'MessageEdited'>;
const linksUploads = (d: Edit) => d.attachment_paths !== null && d.attachment_paths.some((path) => pathIdOfUploadPath(path) !== null);

/** An edit relinks its message to the uploads its new content names (only a content change can change them). */
async function relink(trx: Trx, d: Edit): Promise<HandlerResult> {
  if (d.attachment_paths === null) return 'unchanged';
  const { rows: unlinked } = await runPrepared(trx, trx.deleteFrom('attachment_messages').where('message_id', '=', d.message_id).returning('date_sent'));
  if (!linksUploads(d)) return unlinked.length === 0 ? 'unchanged' : undefined;
  let dateSentMs = unlinked[0] ? Number(unlinked[0].date_sent) : undefined;
  if (dateSentMs === undefined) {
    const sent = await trx.selectFrom('messages').select('date_sent').where('id', '=', d.message_id).executeTakeFirst();
    dateSentMs = sent ? Number(sent.date_sent) * 1000 : d.edit_timestamp * 1000;
  }
  await link(trx, d.realm_id, d.message_id, dateSentMs, d.attachment_paths);
}

/**
 * A run of edits, as relink leaves it. Most content edits name no upload and only drop their
 * message's links: those gather into one statement, written before the next edit that links.
 */
async function relinkAll(trx: Trx, run: ReadonlyArray<RunEvent<'MessageEdited'>>): Promise<HandlerResult> {
  let unlinking: number[] = [];
  let changed = false;
  const unlink = async () => {
    if (unlinking.length === 0) return;
    const { rows } = await runPrepared(trx, sql`DELETE FROM attachment_messages WHERE message_id = ANY(${unlinking}::int[]) RETURNING 1`);
    changed ||= rows.length > 0;
    unlinking = [];
  };
  for (const { data: d } of run) {
    if (d.attachment_paths === null) continue;
    if (!linksUploads(d)) {
      unlinking.push(d.message_id);
      continue;
    }
    await unlink();
    changed = (await relink(trx, d)) !== 'unchanged' || changed;
  }
  await unlink();
  return changed ? undefined : 'unchanged';
}

export const attachmentsProjection = defineProjection({
  name: 'attachments',
  // 2: MessagesShredded unlinks files too.
  version: 2,
  tables: ['attachments', 'attachment_messages'],
  // Few messages link uploads: a run needs a statement only for those that do.
  bulk: {
    MessageSent: async (trx, run) => {
      for (const { data: d } of run) await link(trx, d.realm_id, d.message_id, d.date_sent * 1000, d.attachment_paths);
    },
    MessageEdited: relinkAll,
  },
  // An edit relinks its own message's uploads (and reads that message's date_sent).
  messagesTouched: { MessageEdited: (d) => d.message_id },
  // Its edit fold reads only the message's date_sent, which no fold of a reaction or flag change writes.
  commutingGroups: [['MessageEdited']],
  handlers: {
    AttachmentUploaded: async (trx, d) => {
      await trx
        .insertInto('attachments')
        .values({
          id: d.attachment_id, realm_id: d.realm_id, owner_id: d.owner_id, name: d.name, path_id: d.path_id,
          content_type: d.content_type, size: d.size, create_time: d.create_time, orphaned: false,
        })
        .execute();
    },
    AttachmentDeleted: async (trx, d) => {
      await trx.deleteFrom('attachment_messages').where('attachment_id', '=', d.attachment_id).execute();
      await trx.deleteFrom('attachments').where('id', '=', d.attachment_id).execute();
    },
    MessageSent: (trx, d) => link(trx, d.realm_id, d.message_id, d.date_sent * 1000, d.attachment_paths),
    MessageEdited: (trx, d) => relink(trx, d),
    MessagesDeleted: (trx, d) => unlinkMessages(trx, d.message_ids),
    // Retention and erasure shred messages that were never deleted: their files lose the link too.
    MessagesShredded: (trx, d) => unlinkMessages(trx, d.message_ids),
  },
});
