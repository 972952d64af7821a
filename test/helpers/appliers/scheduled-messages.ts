import { registerApplier } from './registry.js';

const soonestFirst = (a: any, b: any) => a.scheduled_delivery_timestamp - b.scheduled_delivery_timestamp || a.scheduled_message_id - b.scheduled_message_id;

registerApplier('scheduled_messages', (state, event) => {
  if (!state.scheduled_messages) return;
  const list: any[] = state.scheduled_messages;
  if (event.op === 'add') list.push(...event.scheduled_messages);
  else if (event.op === 'update') {
    const index = list.findIndex((m) => m.scheduled_message_id === event.scheduled_message.scheduled_message_id);
    if (index >= 0) list[index] = event.scheduled_message;
  } else if (event.op === 'remove') state.scheduled_messages = list.filter((m) => m.scheduled_message_id !== event.scheduled_message_id);
  else throw new Error(`scheduled_messages op ${event.op}`);
  state.scheduled_messages.sort(soonestFirst);
});
