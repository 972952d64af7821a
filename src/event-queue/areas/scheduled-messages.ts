import type { DataOf } from '../../domain/events.js';
import type { ScheduledMessageData } from '../../domain/scheduled-messages/events.js';
import { registerTranslator } from '../translators.js';
import { registerSection } from '../sections.js';
import { listUndeliveredScheduledMessages, toClientScheduledMessage } from '../../read/scheduled-messages.js';

// Scheduled messages events go only to their sender.
const clientForm = (m: ScheduledMessageData, failed: boolean) => toClientScheduledMessage({ ...m, failed, delivered: false });

registerTranslator('ScheduledMessageCreated', async (event) => {
  const d = event.data as DataOf<'ScheduledMessageCreated'>;
  const event_ = { type: 'scheduled_messages', op: 'add', scheduled_messages: [clientForm(d.scheduled_message, false)] };
  return { audience: new Set([d.scheduled_message.sender_id]), forUser: () => [event_] };
});

registerTranslator('ScheduledMessageEdited', async (event) => {
  const d = event.data as DataOf<'ScheduledMessageEdited'>;
  const event_ = { type: 'scheduled_messages', op: 'update', scheduled_message: clientForm(d.scheduled_message, false) };
  return { audience: new Set([d.scheduled_message.sender_id]), forUser: () => [event_] };
});

registerTranslator('ScheduledMessageFailed', async (event) => {
  const d = event.data as DataOf<'ScheduledMessageFailed'>;
  // A deactivated sender is told nothing (the real server skips the event then).
  if (!d.notify) return null;
  const event_ = { type: 'scheduled_messages', op: 'update', scheduled_message: clientForm(d.scheduled_message, true) };
  return { audience: new Set([d.scheduled_message.sender_id]), forUser: () => [event_] };
});

for (const type of ['ScheduledMessageDelivered', 'ScheduledMessageDeleted'] as const) {
  registerTranslator(type, async (event) => {
    const d = event.data as DataOf<typeof type>;
    const event_ = { type: 'scheduled_messages', op: 'remove', scheduled_message_id: d.scheduled_message_id };
    return { audience: new Set([d.sender_id]), forUser: () => [event_] };
  });
}

registerSection('scheduled_messages', async ({ trx, user }) => ({
  scheduled_messages: await listUndeliveredScheduledMessages(trx, user.id),
}));
