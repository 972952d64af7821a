import type { Db } from '../db/database.js';
import type { AttachmentState } from '../domain/attachments/decider.js';

export interface AttachmentApi {
  id: number;
  name: string;
  path_id: string;
  size: number;
  create_time: number;
  messages: Array<{ id: number; date_sent: number }>;
}

/** "/user_uploads/2/ab/xyz/a%20b.png" (as linked in a message) → "2/ab/xyz/a b.png", or null. */
export function pathIdOfUploadPath(uploadPath: string): string | null {
  const match = /^\/user_uploads\/(.+)$/.exec(uploadPath);
  if (!match) return null;
  try {
    return decodeURIComponent(match[1]!);
  } catch {
    return match[1]!;
  }
}

export async function getAttachmentState(db: Db, attachmentId: number): Promise<AttachmentState | null> {
  const row = await db.selectFrom('attachments').selectAll().where('id', '=', attachmentId).executeTakeFirst();
  if (!row) return null;
  const links = await db
    .selectFrom('attachment_messages')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('attachment_id', '=', attachmentId)
    .executeTakeFirstOrThrow();
  return {
    attachment_id: row.id,
    realm_id: row.realm_id,
    owner_id: row.owner_id,
    path_id: row.path_id,
    size: Number(row.size),
    linked_message_count: Number(links.n),
    orphaned: row.orphaned,
    create_time: Number(row.create_time),
  };
}

export async function getAttachmentByPath(db: Db, pathId: string) {
  return db.selectFrom('attachments').selectAll().where('path_id', '=', pathId).executeTakeFirst();
}

/**
 * Bytes used by the realm's uploads. A file whose last linking message was deleted counts no more
 * (the real server archives it with the message: it leaves the realm's Attachment table at once).
 */
export async function realmUploadSpaceUsed(db: Db, realmId: number): Promise<number> {
  const row = await db
    .selectFrom('attachments')
    .select((eb) => eb.fn.sum<number>('size').as('total'))
    .where('realm_id', '=', realmId)
    .where('orphaned', '=', false)
    .executeTakeFirst();
  return Number(row?.total ?? 0);
}

/** The user's uploads, newest first, with the messages linking to each; not those gone with their deleted messages. */
export async function listAttachments(db: Db, ownerId: number): Promise<AttachmentApi[]> {
  const rows = await db.selectFrom('attachments').selectAll().where('owner_id', '=', ownerId).where('orphaned', '=', false).orderBy('id', 'desc').execute();
  if (rows.length === 0) return [];
  const links = await db
    .selectFrom('attachment_messages')
    .selectAll()
    .where('attachment_id', 'in', rows.map((r) => r.id))
    .orderBy('message_id')
    .execute();
  return rows.map((r) => ({
    id: r.id,
    name: r.name,
    path_id: r.path_id,
    size: Number(r.size),
    create_time: Number(r.create_time),
    messages: links.filter((l) => l.attachment_id === r.id).map((l) => ({ id: l.message_id, date_sent: Number(l.date_sent) })),
  }));
}

/** Attachments that may be due for deletion: no message links them any more (or ever). */
export async function unlinkedAttachmentIds(db: Db): Promise<number[]> {
  const rows = await db
    .selectFrom('attachments as a')
    .select('a.id')
    .where(({ not, exists, selectFrom }) =>
      not(exists(selectFrom('attachment_messages as l').select('l.message_id').whereRef('l.attachment_id', '=', 'a.id'))))
    .orderBy('a.id')
    .execute();
  return rows.map((r) => r.id);
}

/** Message ids that link the attachment. */
export async function linkedMessageIds(db: Db, attachmentId: number): Promise<number[]> {
  const rows = await db.selectFrom('attachment_messages').select('message_id').where('attachment_id', '=', attachmentId).execute();
  return rows.map((r) => r.message_id);
}

/** The path ids of the uploads a message links now. */
export async function linkedAttachmentPathIds(db: Db, messageId: number): Promise<string[]> {
  const rows = await db
    .selectFrom('attachment_messages as l')
    .innerJoin('attachments as a', 'a.id', 'l.attachment_id')
    .select('a.path_id')
    .where('l.message_id', '=', messageId)
    .orderBy('a.path_id')
    .execute();
  return rows.map((r) => r.path_id);
}

/** One upload as the API shows it (the messages linking it, by id), or null when it is gone. */
export async function attachmentApi(db: Db, attachmentId: number): Promise<AttachmentApi | null> {
  const row = await db.selectFrom('attachments').selectAll().where('id', '=', attachmentId).executeTakeFirst();
  if (!row) return null;
  const links = await db.selectFrom('attachment_messages').selectAll().where('attachment_id', '=', attachmentId).orderBy('message_id').execute();
  return {
    id: row.id,
    name: row.name,
    path_id: row.path_id,
    size: Number(row.size),
    create_time: Number(row.create_time),
    messages: links.map((l) => ({ id: l.message_id, date_sent: Number(l.date_sent) })),
  };
}
