import { randomUUID } from 'node:crypto';
import type { TestServer } from '../helpers/server.js';

/** Creates a channel straight through the log (the channel routes belong to another area). */
export async function makeChannel(s: TestServer, name: string, opts: { invite_only?: boolean; subscribers?: number[] } = {}): Promise<number> {
  const id = await s.platform.commands.nextId('stream_id_seq');
  const meta = { actor_id: s.owner.id, realm_id: 1, client: 'test', request_id: randomUUID(), time: new Date().toISOString() };
  await s.platform.commands.run(meta, async () => ({
    appends: [{
      streamId: `stream-${id}-test`,
      expectedVersion: -1,
      events: [
        {
          type: 'StreamCreated',
          data: {
            stream_id: id, realm_id: 1, creator_id: s.owner.id, date_created: Math.floor(Date.now() / 1000), is_default: false,
            name, description: '', rendered_description: '', invite_only: opts.invite_only ?? false, is_web_public: false,
            history_public_to_subscribers: true, stream_post_policy: 1, message_retention_days: null, can_remove_subscribers_group: 0,
          },
        },
        ...(opts.subscribers ?? []).map((user_id) => ({ type: 'UserSubscribed', data: { stream_id: id, user_id, color: '#c2c2c2' } })),
      ],
    }],
    result: undefined,
  }));
  return id;
}
