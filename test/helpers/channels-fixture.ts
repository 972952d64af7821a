import type { TestServer, TestUser } from './server.js';

/** Creates a channel through the API (as `creator`) with the given subscribers; returns its id. */
export async function createChannel(
  s: TestServer,
  creator: TestUser,
  name: string,
  members: TestUser[],
  options: Record<string, unknown> = {},
): Promise<number> {
  const created = await s.api('POST', '/users/me/subscriptions', creator, {
    subscriptions: [{ name }],
    principals: [...new Set([creator.id, ...members.map((m) => m.id)])],
    ...options,
  });
  if (created.status !== 200) throw new Error(`channel ${name}: ${JSON.stringify(created.body)}`);
  const found = await s.api('GET', '/get_stream_id', creator, { stream: name });
  if (found.status !== 200) throw new Error(`channel ${name}: ${JSON.stringify(found.body)}`);
  return found.body.stream_id as number;
}

export async function subscribe(s: TestServer, as: TestUser, name: string, users: TestUser[]): Promise<void> {
  const r = await s.api('POST', '/users/me/subscriptions', as, { subscriptions: [{ name }], principals: users.map((u) => u.id) });
  if (r.status !== 200) throw new Error(`subscribe ${name}: ${JSON.stringify(r.body)}`);
}

export async function unsubscribe(s: TestServer, as: TestUser, name: string, users: TestUser[]): Promise<void> {
  const r = await s.api('DELETE', '/users/me/subscriptions', as, { subscriptions: [name], principals: users.map((u) => u.id) });
  if (r.status !== 200) throw new Error(`unsubscribe ${name}: ${JSON.stringify(r.body)}`);
}

export async function sendStream(s: TestServer, as: TestUser, stream: string | number, topic: string, content: string, extra: Record<string, unknown> = {}): Promise<number> {
  const r = await s.api('POST', '/messages', as, { type: 'stream', to: String(stream), topic, content, ...extra });
  if (r.status !== 200) throw new Error(`send: ${JSON.stringify(r.body)}`);
  return r.body.id as number;
}

export async function sendDm(s: TestServer, as: TestUser, to: TestUser[], content: string): Promise<number> {
  const r = await s.api('POST', '/messages', as, { type: 'direct', to: to.map((u) => u.id), content });
  if (r.status !== 200) throw new Error(`send dm: ${JSON.stringify(r.body)}`);
  return r.body.id as number;
}
