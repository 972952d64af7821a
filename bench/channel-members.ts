/**
 * Set-up shared by the benchmarks that drive a server process over HTTP: a JetStream stream of the
 * run's own, and members made through the API, as clients are.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { basic, callJson } from './http-client.js';

const API = '/api/v1';

/** A NATS_STREAM name of this run's own, so runs never share a log. */
export const benchNatsStream = () => `BENCH_${randomUUID().replace(/-/g, '').slice(0, 12).toUpperCase()}`;

/** The owner's Basic authorization, from the zuliprc a first start writes into DATA_DIR. */
export function ownerAuthOf(dataDir: string): string {
  const zuliprc = readFileSync(path.join(dataDir, 'zuliprc'), 'utf8');
  return basic(/email=(\S+)/.exec(zuliprc)![1]!, /key=(\S+)/.exec(zuliprc)![1]!);
}

/** Runs `task` over `items`, `width` at a time. */
async function inParallel<T, R>(items: T[], width: number, task: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(Array.from({ length: width }, async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await task(items[i]!, i);
    }
  }));
  return results;
}

/**
 * `count` members made by the owner (POST /users), each fetching its own API key (POST /fetch_api_key),
 * all subscribed to the channel "bench"; with that channel's id.
 */
export async function channelMembers(port: number, ownerAuth: string, count: number): Promise<{ users: Array<{ id: number; auth: string }>; streamId: number }> {
  const users = await inParallel(Array.from({ length: count }, (_, i) => i), 4, async (i) => {
    const email = `sender${i}@example.com`;
    const password = randomUUID();
    const { user_id: id } = await callJson(port, 'POST', `${API}/users`, ownerAuth, { email, full_name: `Sender ${i}`, password });
    const { api_key: key } = await callJson(port, 'POST', `${API}/fetch_api_key`, undefined, { username: email, password });
    return { id: id as number, auth: basic(email, key as string) };
  });
  await callJson(port, 'POST', `${API}/users/me/subscriptions`, ownerAuth, {
    subscriptions: JSON.stringify([{ name: 'bench' }]), principals: JSON.stringify(users.map((u) => u.id)),
  });
  const { stream_id: streamId } = await callJson(port, 'GET', `${API}/get_stream_id?stream=bench`, ownerAuth);
  return { users, streamId: streamId as number };
}
