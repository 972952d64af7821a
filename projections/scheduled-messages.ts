import { defineProjection } from './define.js';
import type { ScheduledMessageData } from '../src/domain/scheduled-messages/events.js';

const columnsOf = (m: ScheduledMessageData) => ({
  realm_id: m.realm_id,
  sender_id: m.sender_id,
  type: m.type,
  stream_id: m.stream_id,
  to: JSON.stringify(m.to),
  topic: m.topic,
  content: m.content,
  rendered_content: m.rendered_content,
  scheduled_timestamp: m.scheduled_timestamp,
  read_by_sender: m.read_by_sender,
  client: m.client,
});

export const scheduledMessagesProjection = defineProjection({
  name: 'scheduled-messages',
  version: 2,
  tables: ['scheduled_messages'],
  handlers: {
    ScheduledMessageCreated: async (trx, d, event) => {
      await trx
        .insertInto('scheduled_messages')
        .values({ id: d.scheduled_message.id, ...columnsOf(d.scheduled_message), version: event.stream_version })
        .execute();
    },
    ScheduledMessageEdited: async (trx, d, event) => {
      await trx
        .updateTable('scheduled_messages')
        .set({ ...columnsOf(d.scheduled_message), failed: false, failure_message: null, version: event.stream_version })
        .where('id', '=', d.scheduled_message.id)
        .execute();
    },
    ScheduledMessageFailed: async (trx, d, event) => {
      await trx
        .updateTable('scheduled_messages')
        .set({ failed: true, failure_message: d.failure_message, version: event.stream_version })
        .where('id', '=', d.scheduled_message.id)
        .execute();
    },
    ScheduledMessageDelivered: async (trx, d, event) => {
      await trx
        .updateTable('scheduled_messages')
        // The text lives in the delivered message now (and is shredded with it); its key here is destroyed.
        .set({ delivered: true, delivered_message_id: d.message_id, topic: '', content: '', rendered_content: '', version: event.stream_version })
        .where('id', '=', d.scheduled_message_id)
        .execute();
    },
    ScheduledMessageDeleted: async (trx, d) => {
      await trx.deleteFrom('scheduled_messages').where('id', '=', d.scheduled_message_id).execute();
    },
    // An erased person's scheduled messages are forgotten with them (src/services/erasure.ts).
    UserErased: async (trx, d) => {
      await trx.deleteFrom('scheduled_messages').where('sender_id', '=', d.user_id).execute();
    },
  },
});
