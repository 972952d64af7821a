import type { Db } from '../../db/database.js';
import { messageObject, type MessageRow } from '../../read/messages.js';
import { realmHost, type RealmRow } from '../../read/realm.js';
import { getUsersByIds, type UserRow } from '../../read/users.js';
import type { Linkifier } from '../../markdown/index.js';

/**
 * The triggering message as the real server sends it to a webhook (MessageDict.finalize_payload
 * with apply_markdown=False, client_gravatar=False, keep_rendered_content=True): the GET /messages
 * message with its raw Markdown content and its rendered_content, without flags, as its bot sees it.
 */
export async function webhookMessageDict(
  db: Db,
  bot: UserRow,
  realm: RealmRow,
  row: MessageRow,
  streamName: string,
  linkifiers: Linkifier[],
): Promise<Record<string, unknown>> {
  const participantIds = row.dm_key ? row.dm_key.split(',').map(Number) : [];
  const users = await getUsersByIds(db, [...new Set([row.sender_id, ...participantIds])]);
  const byId = new Map(users.map((u) => [u.id, u]));
  const message = messageObject(row, {
    sender: byId.get(row.sender_id),
    viewer: { user_id: bot.id, role: bot.role, realm_id: bot.realm_id },
    host: realmHost(realm),
    realmStr: realm.string_id,
    streamName,
    participants: participantIds.map((id) => byId.get(id)).filter((u): u is UserRow => u !== undefined),
    applyMarkdown: false,
    clientGravatar: false,
    linkifiers,
    allowEditHistory: (realm.properties as Record<string, unknown>).allow_edit_history !== false,
  });
  message.rendered_content = row.rendered_content;
  return message;
}
