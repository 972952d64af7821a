// The real server's request dispatch (zerver/lib/rest.py rest_dispatch, zerver/lib/response.py
// json_method_not_allowed, zerver/lib/request.py): a POST's `method` field, OPTIONS, 405 answers,
// and parameters the real server reads as JSON.
import t, { type Test } from 'tap';
import { startTestServer, Role, type TestServer, type TestUser } from '../helpers/server.js';
import { PNG } from '../helpers/upload.js';

const FORM = 'application/x-www-form-urlencoded';

/** A raw request: the test helper's own `api` chooses the method and the encoding itself. */
async function send(s: TestServer, method: string, path: string, as: TestUser | null, body?: string, contentType = FORM) {
  const headers: Record<string, string> = {};
  if (as) headers.authorization = as.auth;
  if (body !== undefined) headers['content-type'] = contentType;
  const response = await s.fastify.inject({ method: method as 'GET', url: `/api/v1${path}`, headers, payload: body });
  return { status: response.statusCode, headers: response.headers, text: response.body, body: response.body ? response.json() : undefined };
}

const form = (fields: Record<string, unknown>) =>
  new URLSearchParams(Object.entries(fields).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)])).toString();

/** A multipart body whose parts come in the given order, as a browser's FormData sends them. */
function multipart(parts: Array<{ name: string; value: string } | { name: string; file: Buffer }>) {
  const boundary = `----dispatch${Math.random().toString(16).slice(2)}`;
  const chunks: Buffer[] = [];
  for (const part of parts) {
    if ('file' in part) {
      chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"; filename="a.png"\r\nContent-Type: image/png\r\n\r\n`), part.file, Buffer.from('\r\n'));
    } else {
      chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"\r\n\r\n${part.value}\r\n`));
    }
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { payload: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` };
}

async function draftOf(t: Test, s: TestServer, user: TestUser, content: string): Promise<number> {
  const created = await s.api('POST', '/drafts', user, { drafts: [{ type: '', to: [], topic: '', content, timestamp: 1_700_000_000 }] });
  t.equal(created.status, 200, JSON.stringify(created.body));
  return created.body.ids[0];
}

t.test('a POST whose form body has a `method` field is a request of that method', async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const draft = await draftOf(t, s, alice, 'first');
  const edit = { type: '', to: [], topic: '', content: 'edited', timestamp: 1_700_000_001 };

  // /drafts/{id} has no POST of its own: the field alone makes it a PATCH, then a DELETE.
  const patched = await send(s, 'POST', `/drafts/${draft}`, alice, form({ method: 'PATCH', draft: edit }));
  t.same(patched.body, { result: 'success', msg: '' }, '`method` is no parameter of the PATCH it chose');
  t.match((await s.api('GET', '/drafts', alice)).body.drafts, [{ id: draft, content: 'edited' }]);
  const withUnknown = await send(s, 'POST', `/drafts/${draft}`, alice, form({ method: 'PATCH', draft: edit, bogus: 1 }));
  t.same(withUnknown.body.ignored_parameters_unsupported, ['bogus'], 'other unknown parameters are still listed');
  t.same((await send(s, 'POST', `/drafts/${draft}`, alice, form({ method: 'DELETE' }))).body, { result: 'success', msg: '' });
  t.equal((await s.api('GET', '/drafts', alice)).body.count, 0);

  // A path that has a POST of its own: the field still chooses another method's handler.
  t.same((await s.api('POST', '/users/me/alert_words', alice, { alert_words: ['apple', 'pear'] })).body.alert_words, ['apple', 'pear']);
  const listed = await send(s, 'POST', '/users/me/alert_words', alice, form({ method: 'GET' }));
  t.same(listed.body, { result: 'success', msg: '', alert_words: ['apple', 'pear'] }, 'method=GET lists');
  const removed = await send(s, 'POST', '/users/me/alert_words', alice, form({ method: 'DELETE', alert_words: ['apple'] }));
  t.same(removed.body.alert_words, ['pear'], 'method=DELETE removes');
  const posted = await send(s, 'POST', '/users/me/alert_words', alice, form({ method: 'POST', alert_words: ['plum'] }));
  t.same(posted.body, { result: 'success', msg: '', alert_words: ['pear', 'plum'] }, 'method=POST is the POST itself, without `method` as a parameter');
  // HEAD runs GET's handler, as the real server's dispatch adds it to every path with a GET.
  t.equal((await send(s, 'POST', '/users/me/alert_words', alice, form({ method: 'HEAD' }))).body.alert_words.length, 2);
});

t.test('multipart bodies carry the field too, before or after a file (the web app sends a bot avatar so)', async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const draft = await draftOf(t, s, alice, 'first');
  const edited = multipart([
    { name: 'draft', value: JSON.stringify({ type: '', to: [], topic: '', content: 'from a form', timestamp: 1_700_000_002 }) },
    { name: 'method', value: 'PATCH' },
  ]);
  const patched = await s.fastify.inject({ method: 'POST', url: `/api/v1/drafts/${draft}`, headers: { authorization: alice.auth, 'content-type': edited.contentType }, payload: edited.payload });
  t.same(patched.json(), { result: 'success', msg: '' });
  t.match((await s.api('GET', '/drafts', alice)).body.drafts, [{ content: 'from a form' }]);

  const bot = (await s.api('POST', '/bots', alice, { full_name: 'Helper Bot', short_name: 'helper' })).body as { user_id: number };
  const avatar = multipart([{ name: 'full_name', value: 'Renamed Bot' }, { name: 'f', file: PNG }, { name: 'method', value: 'PATCH' }]);
  const response = await s.fastify.inject({ method: 'POST', url: `/api/v1/bots/${bot.user_id}`, headers: { authorization: alice.auth, 'content-type': avatar.contentType }, payload: avatar.payload });
  t.equal(response.statusCode, 200, response.body);
  t.match(response.json(), { result: 'success', full_name: 'Renamed Bot', avatar_url: new RegExp(`^/user_avatars/1/${bot.user_id}\\.png\\?version=2$`) });
  t.match((await s.api('GET', '/bots', alice)).body.bots, [{ full_name: 'Renamed Bot', avatar_url: response.json().avatar_url }]);
});

t.test('the method field: only in a POST form body, verbatim, and checked against the path', async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const draft = await draftOf(t, s, alice, 'first');
  const notAllowed = { result: 'error', msg: 'Method Not Allowed', code: 'BAD_REQUEST', allowed_methods: ['PATCH', 'DELETE'] };

  const unsupported = await send(s, 'POST', `/drafts/${draft}`, alice, form({ method: 'PUT' }));
  t.equal(unsupported.status, 405);
  t.same(unsupported.body, notAllowed);
  t.equal(unsupported.headers.allow, 'PATCH, DELETE');
  t.equal((await send(s, 'POST', `/drafts/${draft}`, alice, form({ method: 'patch', draft: {} }))).status, 405, 'the name is case-sensitive');
  t.equal((await send(s, 'POST', `/drafts/${draft}`, alice, form({ method: '' }))).status, 405, 'an empty method is no method');
  t.equal((await send(s, 'POST', `/drafts/${draft}?method=DELETE`, alice, '')).status, 405, 'the query string does not choose the method');
  const json = await send(s, 'POST', `/drafts/${draft}`, alice, JSON.stringify({ method: 'DELETE' }), 'application/json');
  t.not(json.status, 200, 'nor does a JSON body');
  t.equal((await s.api('GET', '/drafts', alice)).body.count, 1, 'the draft is still there');
  // A path with a POST of its own: an override to a method it lacks is a 405 that lists its methods.
  const put = await send(s, 'POST', '/users/me/alert_words', alice, form({ method: 'PUT' }));
  t.equal(put.status, 405);
  t.same(put.body.allowed_methods, ['GET', 'POST', 'DELETE', 'HEAD']);
  // A `method` sent by a PATCH is an ordinary (unknown) parameter: only POST bodies are overridden.
  const patch = await send(s, 'PATCH', `/drafts/${draft}`, alice, form({ method: 'DELETE', draft: { type: '', to: [], topic: '', content: 'kept', timestamp: 1 } }));
  t.same(patch.body, { result: 'success', msg: '', ignored_parameters_unsupported: ['method'] });
  t.equal((await s.api('GET', '/drafts', alice)).body.count, 1);
});

t.test('an overridden request is authenticated as its target is', async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const draft = await draftOf(t, s, alice, 'first');

  const anonymous = await send(s, 'POST', `/drafts/${draft}`, null, form({ method: 'DELETE' }));
  t.equal(anonymous.status, 401);
  t.match(anonymous.body, { code: 'UNAUTHORIZED' });
  t.equal(anonymous.headers['www-authenticate'], 'Basic realm="zulip"');
  const wrongKey = await send(s, 'POST', `/drafts/${draft}`, { ...alice, auth: `Basic ${Buffer.from(`${alice.email}:${'x'.repeat(32)}`).toString('base64')}` }, form({ method: 'DELETE' }));
  t.match(wrongKey.body, { code: 'INVALID_API_KEY' });
  const bob = await s.user(Role.MEMBER, 'Bob');
  t.equal((await send(s, 'POST', `/drafts/${draft}`, bob, form({ method: 'DELETE' }))).status, 404, 'someone else\'s draft stays theirs');
  t.equal((await s.api('GET', '/drafts', alice)).body.count, 1);

  // A public target needs no credentials through a POST either.
  const settings = await send(s, 'POST', '/server_settings', null, form({ method: 'GET' }));
  t.equal(settings.status, 200);
  t.match(settings.body, { result: 'success', zulip_feature_level: Number });
  t.notOk('ignored_parameters_unsupported' in settings.body);
  // An administrators' route keeps its role check.
  t.match((await send(s, 'POST', '/realm', alice, form({ method: 'PATCH', name: 'Taken over' }))).body, { code: 'UNAUTHORIZED_PRINCIPAL' });
});

t.test('an overridden request is rate limited as its target is', async (t) => {
  const s = await startTestServer(t, { rateLimitPerMinute: 3 });
  const alice = await s.user(Role.MEMBER, 'Alice');
  const statuses: number[] = [];
  for (let i = 0; i < 4; i++) statuses.push((await send(s, 'POST', '/users/me/alert_words', alice, form({ method: 'GET' }))).status);
  t.same(statuses, [200, 200, 200, 429], 'a limited target counts');
  t.equal((await send(s, 'POST', '/drafts/15', alice, form({ draft: {} }))).status, 405, 'a path\'s 405 comes before its rate limit');
  // GET /events is not limited (a long-poll): neither is a POST dispatched to it.
  const bob = await s.user(Role.MEMBER, 'Bob');
  const queue = (await s.api('POST', '/register', bob, { event_types: ['alert_words'] })).body.queue_id as string;
  const polls: number[] = [];
  for (let i = 0; i < 4; i++) polls.push((await send(s, 'POST', '/events', bob, form({ method: 'GET', queue_id: queue, last_event_id: -1, dont_block: true }))).status);
  t.same(polls, [200, 200, 200, 200]);
});

t.test('OPTIONS answers 204 with the path\'s methods, before any authentication', async (t) => {
  const s = await startTestServer(t);
  const users = await send(s, 'OPTIONS', '/users', null);
  t.equal(users.status, 204);
  t.equal(users.headers.allow, 'GET, HEAD, POST');
  t.equal(users.text, '', 'no body');
  t.equal((await send(s, 'OPTIONS', '/drafts/15', null)).headers.allow, 'DELETE, PATCH');
  t.equal((await send(s, 'OPTIONS', '/streams/15', null)).headers.allow, 'DELETE, GET, HEAD, PATCH');
  t.equal((await send(s, 'OPTIONS', '/users/me', null)).headers.allow, 'DELETE, GET, HEAD', 'the static path, not /users/{user_id}');
  const unknown = await send(s, 'OPTIONS', '/no_such_endpoint', null);
  t.equal(unknown.status, 404);
  t.match(unknown.body, { code: 'NOT_FOUND', msg: 'Endpoint not found' });
});

t.test('a method the path lacks is the real server\'s 405, before authentication', async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  for (const as of [alice, null]) {
    const put = await send(s, 'PUT', '/users', as);
    t.equal(put.status, 405);
    t.same(put.body, { result: 'error', msg: 'Method Not Allowed', code: 'BAD_REQUEST', allowed_methods: ['GET', 'POST', 'HEAD'] });
    t.equal(put.headers.allow, 'GET, POST, HEAD');
  }
  // A POST without the field to a path that has no POST.
  for (const as of [alice, null]) {
    const post = await send(s, 'POST', '/drafts/15', as, form({ draft: {} }));
    t.equal(post.status, 405, as ? 'authenticated' : 'anonymous');
    t.same(post.body, { result: 'error', msg: 'Method Not Allowed', code: 'BAD_REQUEST', allowed_methods: ['PATCH', 'DELETE'] });
  }
  t.same((await send(s, 'DELETE', '/users/me/subscriptions/properties', alice, '')).body.allowed_methods, ['POST', 'PATCH'], 'no GET, so no HEAD');
  const head = await send(s, 'HEAD', '/messages/render', alice);
  t.equal(head.status, 405, 'HEAD only where there is a GET');
  t.equal(head.headers.allow, 'POST');
  // `render` is no message id: /messages/{message_id} does not take the path, /messages/render does.
  t.same((await send(s, 'GET', '/messages/render', alice)).body.allowed_methods, ['POST']);
  t.same((await send(s, 'PATCH', '/drafts/abc', alice, form({ draft: {} }))).body, { result: 'error', msg: 'Endpoint not found', code: 'NOT_FOUND' }, 'nor is `abc` a draft id');
  t.equal((await send(s, 'PUT', '/drafts/abc', alice, '')).status, 404);
  t.equal((await send(s, 'HEAD', '/users', alice)).status, 200);
});

t.test('a parameter the real server reads as JSON refuses text that is not JSON', async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const notJson = (name: string) => ({ result: 'error', msg: `Argument "${name}" is not valid JSON.`, code: 'BAD_REQUEST' });

  // An integer: bare or JSON; text that is not JSON is refused as such, a JSON string as no integer.
  t.same((await s.api('POST', '/mark_stream_as_read', alice, { stream_id: 'abc' })).body, notJson('stream_id'));
  t.same((await s.api('POST', '/mark_stream_as_read', alice, { stream_id: '' })).body, notJson('stream_id'), 'empty text is no JSON');
  t.match((await s.api('POST', '/mark_stream_as_read', alice, { stream_id: '"5"' })).body, { code: 'BAD_REQUEST', msg: 'stream_id is not an integer' });
  t.match((await s.api('POST', '/mark_stream_as_read', alice, { stream_id: '5' })).body, { msg: 'Invalid channel ID' }, 'a bare integer is read');
  // A boolean likewise.
  t.same((await s.api('PATCH', '/settings', alice, { enter_sends: 'sometimes' })).body, notJson('enter_sends'));
  t.match((await s.api('PATCH', '/settings', alice, { enter_sends: '"true"' })).body, { msg: 'enter_sends is not a boolean' });
  t.equal((await s.api('PATCH', '/settings', alice, { enter_sends: 'true' })).status, 200);
  // A list or an object (as before).
  t.same((await s.api('POST', '/users/me/alert_words', alice, { alert_words: 'apple' })).body, notJson('alert_words'));
  // On GET too, from the query string.
  t.same((await s.api('GET', '/users', alice, { client_gravatar: 'maybe' })).body, notJson('client_gravatar'));
  t.equal((await s.api('GET', '/users', alice, { client_gravatar: 'false' })).status, 200);
});

t.test('plain string parameters and parameters that may be plain strings keep their text', async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  t.equal((await s.api('PATCH', '/settings', alice, { default_language: 'de' })).status, 200, 'a string is not JSON-decoded');
  t.match((await s.api('PATCH', '/settings', alice, { default_language: '"de"' })).body, { msg: 'Invalid default_language' }, 'nor are its quotes taken off');
  const sent = await s.api('POST', '/messages', alice, { type: 'private', to: alice.email, content: '{not json' });
  t.equal(sent.status, 200, '`to` takes a bare email; `content` keeps text that looks like broken JSON');
  t.match((await s.api('GET', `/messages/${sent.body.id}`, alice, { apply_markdown: false })).body.message, { content: '{not json' });
});
