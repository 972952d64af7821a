import t from 'tap';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Ajv } from 'ajv';
import { parse } from 'yaml';
import { startTestServer, Role, encodeParams } from '../helpers/server.js';
import { createChannel, sendStream } from '../helpers/channels-fixture.js';
import { repoRoot } from '../helpers/repo-root.js';

// Responses must match what docs/audit-openapi.yaml promises.
const spec = parse(readFileSync(path.join(repoRoot, 'docs', 'audit-openapi.yaml'), 'utf8'));
const ajv = new Ajv({ strict: false, validateFormats: false });
ajv.addSchema(spec, 'audit');
const documented = (path: string) => ajv.compile({ $ref: `audit#/paths/${path.replace(/\//g, '~1')}/get/responses/200/content/application~1json/schema` });
const eventsResponse = documented('/audit/events');
const messageResponse = documented('/audit/messages/{message_id}');

t.test('audit API: only owners and administrators', async (t) => {
  const s = await startTestServer(t);
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  for (const role of [Role.MODERATOR, Role.MEMBER, Role.GUEST]) {
    const other = await s.user(role);
    for (const path of ['/audit/events', '/audit/messages/1']) {
      const r = await s.api('GET', path, other);
      t.equal(r.status, 400, `role ${role} ${path}`);
      t.equal(r.body.code, 'UNAUTHORIZED_PRINCIPAL');
      t.equal(r.body.msg, 'Must be an organization administrator');
    }
  }
  t.equal((await s.api('GET', '/audit/events', null)).status, 401, 'no credentials');
  t.equal((await s.api('GET', '/audit/events', admin)).status, 200);
  t.equal((await s.api('GET', '/audit/events', s.owner)).status, 200);
});

t.test('audit API: entries, filters, cursor pagination and redaction', async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const sid = await createChannel(s, alice, 'audited', [bob]);
  const started = new Date().toISOString();
  const m1 = await sendStream(s, alice, sid, 'a', 'first');
  const m2 = await sendStream(s, bob, sid, 'a', 'second');
  // A request id given by the client is the one in the event's metadata (and in the logs).
  const tagged = await s.fastify.inject({
    method: 'POST',
    url: '/api/v1/messages',
    headers: { authorization: alice.auth, 'content-type': 'application/x-www-form-urlencoded', 'x-request-id': 'audit-req-42' },
    payload: encodeParams({ type: 'stream', to: String(sid), topic: 'a', content: 'third' }),
  });
  t.equal(tagged.statusCode, 200);
  const m3 = tagged.json().id as number;
  await s.api('POST', '/users/me/api_key/regenerate', alice);

  const all = await s.api('GET', '/audit/events', s.owner, { limit: 1000 });
  t.equal(all.status, 200);
  const entries = all.body.events as Array<Record<string, any>>;
  t.ok(entries.length > 5);
  t.same(Object.keys(entries[0]!).sort(), ['data', 'event_id', 'hash', 'metadata', 'position', 'schema_version', 'stream_id', 'stream_version', 'type']);
  t.ok(entries.every((e, i) => i === 0 || e.position > entries[i - 1]!.position), 'in position order');
  t.match(entries[0]!.hash, /^[0-9a-f]{64}$/);
  t.equal(all.body.next_after, null, 'everything fit in one page');
  t.equal(all.body.head_position, entries[entries.length - 1]!.position);
  t.ok(eventsResponse(all.body), `documented shape: ${ajv.errorsText(eventsResponse.errors)}`);

  const text = JSON.stringify(all.body);
  t.notOk(text.includes(alice.apiKey), 'the API key never appears');
  const created = entries.find((e) => e.type === 'UserCreated' && e.data.user_id === alice.id)!;
  t.equal(created.data.api_key, '[redacted]');
  const regenerated = entries.find((e) => e.type === 'UserApiKeyRegenerated')!;
  t.equal(regenerated.data.api_key, '[redacted]');
  t.equal(regenerated.metadata.actor_id, alice.id);

  const byRequest = entries.find((e) => e.type === 'MessageSent' && e.data.message_id === m3)!;
  t.equal(byRequest.metadata.request_id, 'audit-req-42');

  // actor + type
  const bobs = await s.api('GET', '/audit/events', s.owner, { actor_id: bob.id, event_types: ['MessageSent'] });
  t.same(bobs.body.events.map((e: any) => e.data.message_id), [m2]);
  // aggregate: a message's stream, a user's stream, a channel's stream, a raw stream id
  const msg = await s.api('GET', '/audit/events', s.owner, { message_id: m1 });
  t.same(msg.body.events.map((e: any) => e.stream_id), [`message-${m1}`]);
  const user = await s.api('GET', '/audit/events', s.owner, { user_id: alice.id });
  t.same(user.body.events.map((e: any) => e.type), ['UserCreated', 'UserApiKeyRegenerated']);
  const channel = await s.api('GET', '/audit/events', s.owner, { channel_id: sid });
  t.equal(channel.body.events[0].type, 'StreamCreated');
  t.ok(channel.body.events.every((e: any) => e.stream_id === `channel-${sid}`));
  const raw = await s.api('GET', '/audit/events', s.owner, { stream_id: `message-${m2}` });
  t.same(raw.body.events.map((e: any) => e.data.message_id), [m2]);
  // time range
  const recent = await s.api('GET', '/audit/events', s.owner, { since: started, event_types: ['MessageSent'] });
  t.same(recent.body.events.map((e: any) => e.data.message_id), [m1, m2, m3]);
  const none = await s.api('GET', '/audit/events', s.owner, { until: '2000-01-01T00:00:00Z' });
  t.same(none.body.events, []);
  // position range
  const p1 = entries.find((e) => e.type === 'MessageSent' && e.data.message_id === m1)!.position;
  const p2 = entries.find((e) => e.type === 'MessageSent' && e.data.message_id === m2)!.position;
  const range = await s.api('GET', '/audit/events', s.owner, { after: p1 - 1, max_position: p2 });
  t.same(range.body.events.map((e: any) => e.position), entries.filter((e) => e.position >= p1 && e.position <= p2).map((e) => e.position));

  // cursor pagination walks the whole log exactly once
  const seen: number[] = [];
  let after = 0;
  for (let pages = 0; pages < 100; pages++) {
    const page = await s.api('GET', '/audit/events', s.owner, { after, limit: 3 });
    t.equal(page.status, 200);
    seen.push(...page.body.events.map((e: any) => e.position));
    if (page.body.next_after === null) break;
    after = page.body.next_after;
  }
  t.same(seen, entries.map((e) => e.position), 'pages cover the log with no gap or repeat');

  // bad input is a 4xx
  for (const params of [{ limit: 1001 }, { limit: 0 }, { after: -1 }, { since: 'yesterday' }, { event_types: 'MessageSent' }, { actor_id: 'x' }]) {
    const r = await s.api('GET', '/audit/events', s.owner, params);
    t.equal(r.status, 400, JSON.stringify(params));
    t.equal(r.body.result, 'error');
  }
});

t.test("audit API: a message's whole life, even after deletion", async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const sid = await createChannel(s, alice, 'lives', [bob]);
  const other = await createChannel(s, alice, 'elsewhere', [bob]);
  const first = await sendStream(s, alice, sid, 'topic', 'anchor message');
  const m = await sendStream(s, alice, sid, 'topic', 'original words');
  const unrelated = await sendStream(s, bob, sid, 'other', 'not this one');
  t.equal((await s.api('PATCH', `/messages/${m}`, alice, { content: 'edited words' })).status, 200);
  // A move filed on another message's stream that carries this one along.
  t.equal((await s.api('PATCH', `/messages/${first}`, alice, { topic: 'moved', propagate_mode: 'change_all' })).status, 200);
  t.equal((await s.api('PATCH', `/messages/${m}`, s.owner, { stream_id: other, propagate_mode: 'change_one' })).status, 200);
  t.equal((await s.api('POST', `/messages/${m}/reactions`, bob, { emoji_name: 'tada' })).status, 200);
  t.equal((await s.api('DELETE', `/messages/${m}/reactions`, bob, { emoji_name: 'tada' })).status, 200);
  t.equal((await s.api('POST', '/messages/flags', bob, { messages: [m], op: 'add', flag: 'starred' })).status, 200);
  t.equal((await s.api('DELETE', `/messages/${m}`, s.owner)).status, 200);
  t.equal((await s.api('GET', `/messages/${m}`, alice)).status, 400, 'the message itself is gone');

  const life = await s.api('GET', `/audit/messages/${m}`, s.owner);
  t.equal(life.status, 200);
  t.equal(life.body.message_id, m);
  t.equal(life.body.deleted, true);
  t.ok(messageResponse(life.body), `documented shape: ${ajv.errorsText(messageResponse.errors)}`);
  const types = life.body.events.map((e: any) => e.type);
  t.same(types, ['MessageSent', 'MessageEdited', 'MessageEdited', 'MessageEdited', 'ReactionAdded', 'ReactionRemoved', 'MessagesDeleted']);
  const [sent, edit, move, channelMove] = life.body.events;
  t.equal(sent.data.content, 'original words');
  t.equal(edit.data.content, 'edited words');
  t.equal(edit.data.prev_content, 'original words');
  t.equal(move.stream_id, `message-${first}`, 'the topic move came through another message');
  t.ok(move.data.message_ids.includes(m));
  t.equal(channelMove.data.new_stream_id, other);
  t.equal(life.body.events[6].metadata.actor_id, s.owner.id, 'who deleted it');
  t.notOk(types.includes('MessageFlagsChanged'), 'per-user flags are left out');
  t.notOk(life.body.events.some((e: any) => e.data.message_id === unrelated));

  const live = await s.api('GET', `/audit/messages/${unrelated}`, s.owner);
  t.equal(live.body.deleted, false);
  t.same(live.body.events.map((e: any) => e.type), ['MessageSent']);

  const missing = await s.api('GET', '/audit/messages/999999', s.owner);
  t.equal(missing.status, 400);
  t.equal(missing.body.msg, 'Invalid message(s)');
  // An integer in the path takes digits only, as in the real server's URL patterns: anything else is no route.
  t.equal((await s.api('GET', '/audit/messages/abc', s.owner)).status, 404);
});
