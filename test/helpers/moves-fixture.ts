import type { TestServer, TestUser } from './server.js';

// Shared by the tests of messages moved between channels: a queue that hears about moves, a
// non-blocking poll of it, and a single-message move that must succeed.

export const moveQueueRegister = {
  event_types: ['message', 'update_message', 'delete_message', 'update_message_flags'],
  fetch_event_types: ['message', 'update_message_flags', 'starred_messages'],
  client_capabilities: { bulk_message_deletion: true },
  apply_markdown: true,
};

export const queueOf = async (s: TestServer, u: TestUser) => s.api('POST', '/register', u, moveQueueRegister);

/** The events waiting in a queue registered by queueOf, heartbeats left out. */
export const poll = async (s: TestServer, u: TestUser, reg: { body: any }) =>
  (await s.api('GET', '/events', u, { queue_id: reg.body.queue_id, last_event_id: reg.body.last_event_id, dont_block: true })).body.events
    .filter((e: { type: string }) => e.type !== 'heartbeat') as Array<Record<string, any>>;

/** Moves one message to another channel; throws on anything but success. */
export const move = async (s: TestServer, as: TestUser, id: number, streamId: number) => {
  const r = await s.api('PATCH', `/messages/${id}`, as, { stream_id: streamId, propagate_mode: 'change_one' });
  if (r.status !== 200) throw new Error(`move: ${JSON.stringify(r.body)}`);
};
