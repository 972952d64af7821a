import type { TestServer, TestUser } from './server.js';

/** Creates a channel through the API (POST /users/me/subscriptions) and returns its id. */
export async function createChannel(
  s: TestServer,
  creator: TestUser,
  name: string,
  options: { subscribers?: number[]; invite_only?: boolean; stream_post_policy?: number } = {},
): Promise<number> {
  const res = await s.api('POST', '/users/me/subscriptions', creator, {
    subscriptions: [{ name }],
    principals: options.subscribers ?? [creator.id],
    invite_only: options.invite_only ?? false,
    ...(options.stream_post_policy !== undefined ? { stream_post_policy: options.stream_post_policy } : {}),
  });
  if (res.status !== 200) throw new Error(`could not create channel ${name}: ${JSON.stringify(res.body)}`);
  const row = await s.platform.db.selectFrom('streams').select('id').where('name', '=', name).executeTakeFirstOrThrow();
  return row.id;
}
