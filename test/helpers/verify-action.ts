import type { Test } from 'tap';
import type { TestServer, TestUser } from './server.js';
import { applyEvent } from './apply-event.js';

export interface VerifyOptions {
  /** POST /register parameters (event_types, fetch_event_types, client_capabilities, ...). */
  register?: Record<string, unknown>;
  /** Checks on the delivered events (e.g. that the expected type arrived). */
  expect?: (events: Array<Record<string, any>>) => void;
  /** State keys that legitimately differ between two registrations. */
  ignoreKeys?: string[];
}

const ALWAYS_IGNORED = ['queue_id', 'last_event_id', 'result', 'msg', 'server_timestamp'];

/**
 * The real server's verify_action: register, act, fold the delivered events into the registered
 * state, and compare with a fresh registration. Returns the delivered events.
 */
export async function verifyAction(
  t: Test,
  s: TestServer,
  user: TestUser,
  action: () => Promise<unknown>,
  options: VerifyOptions = {},
): Promise<Array<Record<string, any>>> {
  return (await verifyActionForEach(t, s, [user], action, options))[0]!;
}

/**
 * verifyAction for several users at once around one action (one queue each): the events each of
 * them got, in the order of `users`.
 */
export async function verifyActionForEach(
  t: Test,
  s: TestServer,
  users: readonly TestUser[],
  action: () => Promise<unknown>,
  options: VerifyOptions = {},
): Promise<Array<Array<Record<string, any>>>> {
  const registerParams = options.register ?? {};
  const registered: Array<Record<string, any>> = [];
  for (const user of users) {
    const before = await s.api('POST', '/register', user, registerParams);
    t.equal(before.status, 200, 'register succeeds');
    registered.push(before.body);
  }
  await action();
  const out: Array<Array<Record<string, any>>> = [];
  for (const [i, user] of users.entries()) out.push(await foldAndCompare(t, s, user, registered[i]!, options));
  return out;
}

async function foldAndCompare(t: Test, s: TestServer, user: TestUser, before: Record<string, any>, options: VerifyOptions): Promise<Array<Record<string, any>>> {
  const registerParams = options.register ?? {};
  const polled = await s.api('GET', '/events', user, { queue_id: before.queue_id, last_event_id: before.last_event_id, dont_block: true });
  t.equal(polled.status, 200, 'events are readable');
  const events = (polled.body.events as Array<Record<string, any>>).filter((e) => e.type !== 'heartbeat');
  let lastId = before.last_event_id as number;
  for (const event of events) {
    t.ok(event.id > lastId, `event ids increase (${event.type})`);
    lastId = event.id;
  }
  options.expect?.(events);
  const state = structuredClone(before) as Record<string, any>;
  const after = await s.api('POST', '/register', user, registerParams);
  const capabilities = typeof registerParams.client_capabilities === 'string'
    ? JSON.parse(registerParams.client_capabilities)
    : (registerParams.client_capabilities as Record<string, unknown> | undefined) ?? {};
  const settings = (await s.api('GET', '/server_settings', null)).body as { realm_url?: string; realm_uri?: string };
  const ctx = {
    userId: user.id,
    clientGravatar: [true, 'true'].includes(registerParams.client_gravatar as never),
    includeSubscribers: [true, 'true', 'partial'].includes(registerParams.include_subscribers as never),
    userListIncomplete: capabilities.user_list_incomplete === true,
    realmHost: new URL(settings.realm_url ?? settings.realm_uri ?? 'http://localhost').host,
    server: structuredClone(after.body) as Record<string, any>,
  };
  for (const event of events) applyEvent(state, event, ctx);
  if (capabilities.notification_settings_null !== true) inheritNotificationSettings(state, await userSettingsOf(s, user));
  const ignored = [...ALWAYS_IGNORED, ...(options.ignoreKeys ?? [])];
  for (const key of ignored) {
    delete state[key];
    delete after.body[key];
  }
  t.same(normalize(state), normalize(after.body), 'state + events equals a fresh register');
  return events;
}

/** Arrays of objects with ids compare regardless of order. */
function normalize(value: unknown): unknown {
  if (Array.isArray(value)) {
    const items = value.map(normalize);
    const key = (x: any) => (x && typeof x === 'object' ? x.user_id ?? x.stream_id ?? x.id ?? JSON.stringify(x) : x);
    return items.every((x) => x && typeof x === 'object') ? [...items].sort((a, b) => (key(a) > key(b) ? 1 : key(a) < key(b) ? -1 : 0)) : items;
  }
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(value).sort()) out[k] = normalize((value as Record<string, unknown>)[k]);
    return out;
  }
  return value;
}

/**
 * As the real verify_action post-processes the folded state for a client without notification_settings_null:
 * a subscription's null notification setting (one an event brought) reads as the user's default.
 */
function inheritNotificationSettings(state: Record<string, any>, settings: Record<string, unknown>): void {
  for (const entry of [...(state.subscriptions ?? []), ...(state.unsubscribed ?? [])]) {
    for (const kind of ['desktop', 'audible', 'push', 'email']) {
      if (entry[`${kind}_notifications`] === null) entry[`${kind}_notifications`] = settings[`enable_stream_${kind}_notifications`];
    }
  }
}

/** The user's settings now, as the real verify_action reads them from the user's row. */
async function userSettingsOf(s: TestServer, user: TestUser): Promise<Record<string, unknown>> {
  const r = await s.api('POST', '/register', user, { fetch_event_types: ['user_settings'], event_types: ['heartbeat'], client_capabilities: { user_settings_object: true } });
  return r.body.user_settings as Record<string, unknown>;
}
