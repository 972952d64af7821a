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

/** Bytes used by all uploads of the realm. */
export async function realmUploadSpaceUsed(db: Db, realmId: number): Promise<number> {
  const row = await db
    .selectFrom('attachments')
    .select((eb) => eb.fn.sum<number>('size').as('total'))
    .where('realm_id', '=', realmId)
    .executeTakeFirst();
  return Number(row?.total ?? 0);
}

/** The user's uploads, newest first, with the messages linking to each. */
export async function listAttachments(db: Db, ownerId: number): Promise<AttachmentApi[]> {
  const rows = await db.selectFrom('attachments').selectAll().where('owner_id', '=', ownerId).orderBy('id', 'desc').execute();
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
