import type { DataOf } from '../../domain/events.js';
import { messageReceiverIds } from '../../visibility.js';
import { registerTranslator } from '../translators.js';

// To everyone who has the message (its channel's receivers, or the direct message's participants).
registerTranslator('SubmessageAdded', async (event, db) => {
  const d = event.data as DataOf<'SubmessageAdded'>;
  const message = await db.selectFrom('messages').select(['stream_id', 'dm_key', 'sender_id']).where('id', '=', d.message_id).executeTakeFirst();
  if (!message) return null;
  const audience = new Set<number>(
    message.stream_id !== null ? await messageReceiverIds(db, message.stream_id, d.message_id) : (message.dm_key ?? '').split(',').filter(Boolean).map(Number),
  );
  audience.add(message.sender_id);
  return {
    audience,
    forUser: () => [{ type: 'submessage', msg_type: d.msg_type, message_id: d.message_id, submessage_id: d.submessage_id, sender_id: d.sender_id, content: d.content }],
  };
});
