// Code blocks come back highlighted with Pygments' token classes, as the real server sends them, in the
// stored message and in its event (the HTML is made once, at send or edit).
import t from 'tap';
import { startTestServer, Role } from '../helpers/server.js';
import { verifyAction } from '../helpers/verify-action.js';
import { createChannel, sendStream } from '../helpers/channels-fixture.js';

const register = { event_types: ['message', 'update_message'], fetch_event_types: ['message'], apply_markdown: true };

const python = '```python\ndef f(x):\n    return "x"\n```';
const highlighted =
  '<div class="codehilite" data-code-language="Python"><pre><span></span><code><span class="k">def</span><span class="w"> </span>' +
  '<span class="nf">f</span><span class="p">(</span><span class="n">x</span><span class="p">):</span>\n' +
  '    <span class="k">return</span> <span class="s2">&quot;x&quot;</span>\n</code></pre></div>';

t.test('a fenced python block is highlighted in GET /messages, in the message event and after an edit', async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  await createChannel(s, alice, 'code', [bob]);

  let id = 0;
  const events = await verifyAction(t, s, bob, async () => {
    id = await sendStream(s, alice, 'code', 'snippets', python);
  }, { register });
  t.equal(events[0]?.message.content, highlighted, 'the message event');

  const fetched = await s.api('GET', '/messages', bob, { anchor: id, num_before: 0, num_after: 0, apply_markdown: true });
  t.equal(fetched.body.messages[0].content, highlighted, 'GET /messages');
  t.equal((await s.api('GET', `/messages/${id}`, bob)).body.message.content, highlighted, 'GET /messages/{id}');

  const edited = await verifyAction(t, s, bob, () => s.api('PATCH', `/messages/${id}`, alice, { content: '```js\nlet a = 1;\n```' }), { register });
  const update = edited.find((event) => event.type === 'update_message');
  t.match(update?.rendered_content, /^<div class="codehilite" data-code-language="JavaScript"><pre><span><\/span><code><span class="kd">let<\/span>/);
  t.equal((await s.api('GET', `/messages/${id}`, bob)).body.message.content, update?.rendered_content, 'the edit is stored as sent');
});

t.test("the realm's default code block language highlights fenced blocks that name none", async (t) => {
  const s = await startTestServer(t);
  const owner = await s.user(Role.OWNER, 'Owner');
  await createChannel(s, owner, 'code', []);
  t.equal((await s.api('PATCH', '/realm', owner, { default_code_block_language: 'python' })).status, 200);
  const id = await sendStream(s, owner, 'code', 't', '```\ndef f(x):\n    return "x"\n```');
  t.equal((await s.api('GET', `/messages/${id}`, owner)).body.message.content, highlighted);
  const text = await sendStream(s, owner, 'code', 't', '```text\ndef f(x):\n```');
  t.equal((await s.api('GET', `/messages/${text}`, owner)).body.message.content,
    '<div class="codehilite" data-code-language="Text only"><pre><span></span><code>def f(x):\n</code></pre></div>', '```text stays plain');
});
