import t from 'tap';
import { startTestServer, Role } from '../helpers/server.js';
import { createChannel, sendDm, sendStream, unsubscribe } from '../helpers/channels-fixture.js';

// GET /messages/{message_id}/history by the real server's fill_edit_history_entries and its
// message-editing tests: one snapshot per version, oldest first, each with the fields its edit
// changed, and content_html_diff (lxml's htmldiff of the two rendered versions) on content edits.

const shared = startTestServer(t);
const ins = (html: string) => `<span class="highlight_text_inserted">${html}</span>`;
const del = (html: string) => `<span class="highlight_text_deleted">${html}</span>`;
type Snapshot = Record<string, unknown>;

t.test('content edits carry the highlighted differences', async (t) => {
  const s = await shared;
  const hamlet = await s.user(Role.MEMBER, 'Hamlet');
  await createChannel(s, hamlet, 'history diff', []);
  const history = async (id: number) => (await s.api('GET', `/messages/${id}/history`, hamlet)).body.message_history as Snapshot[];
  const edit = async (id: number, content: string) => t.equal((await s.api('PATCH', `/messages/${id}`, hamlet, { content })).status, 200);

  const one = await sendStream(s, hamlet, 'history diff', 'editing', 'content before edit');
  await edit(one, 'content after edit');
  const first = await history(one);
  t.equal(first[0]!.rendered_content, '<p>content before edit</p>');
  t.equal(first[1]!.rendered_content, '<p>content after edit</p>');
  t.equal(first[1]!.prev_rendered_content, '<p>content before edit</p>');
  t.equal(first[1]!.content_html_diff, `<div><p>content ${ins('after')} ${del('before')} edit</p></div>`);
  t.notOk('content_html_diff' in first[0]!, 'the original version has no diff');

  const lines = await sendStream(s, hamlet, 'history diff', 'editing', 'content before edit, line 1\n\ncontent before edit, line 3');
  await edit(lines, 'content before edit, line 1\ncontent after edit, line 2\ncontent before edit, line 3');
  const second = await history(lines);
  t.equal(second[1]!.rendered_content, '<p>content before edit, line 1<br>\ncontent after edit, line 2<br>\ncontent before edit, line 3</p>');
  t.equal(second[1]!.content_html_diff,
    `<div><p>content before edit, line 1<br> content ${ins('after edit, line 2<br> content')} before edit, line 3</p></div>`);

  const link = await sendStream(s, hamlet, 'history diff', 'editing', 'Here is a link to [zulip](www.zulip.org).');
  await edit(link, 'Here is a link to [zulip](www.zulipchat.com).');
  t.equal((await history(link))[1]!.content_html_diff,
    `<div><p>Here is a link to <a href="http://www.zulipchat.com">zulip ${ins(' Link: http://www.zulipchat.com .')} ${del(' Link: http://www.zulip.org .')} </a></p></div>`);

  // Three content edits: each diff compares its version with the one just before it.
  const three = await sendStream(s, hamlet, 'history diff', 'editing', 'one two three');
  await edit(three, 'one two three\n\nfour five');
  await edit(three, 'one two three');
  const chain = await history(three);
  t.same(chain.map((h) => h.content), ['one two three', 'one two three\n\nfour five', 'one two three']);
  t.equal(chain[1]!.content_html_diff, `<div><p>one two three</p> <p>${ins('four five')}</p></div>`, 'a paragraph added');
  t.equal(chain[2]!.content_html_diff, `<div><p>one two three</p> <p>${del('four five')}</p></div>`, 'and removed again');
});

t.test('the fields of each kind of edit', async (t) => {
  const s = await shared;
  const hamlet = await s.user(Role.MEMBER, 'Hamlet');
  const iago = await s.user(Role.ADMINISTRATOR, 'Iago');
  const s1 = await createChannel(s, hamlet, 'kinds 1', [iago]);
  const s2 = await createChannel(s, hamlet, 'kinds 2', [iago]);
  const m = await sendStream(s, hamlet, 'kinds 1', 'topic 1', 'content 1');
  const patch = async (as: typeof hamlet, params: Record<string, unknown>) => t.equal((await s.api('PATCH', `/messages/${m}`, as, params)).status, 200);
  await patch(hamlet, { content: 'content 2' });
  await patch(hamlet, { topic: 'topic 2' });
  await patch(iago, { stream_id: s2 });
  await patch(hamlet, { content: 'content 3', topic: 'topic 3' });

  const got = await s.api('GET', `/messages/${m}/history`, hamlet);
  t.equal(got.status, 200);
  const history = got.body.message_history as Snapshot[];
  const base = ['content', 'rendered_content', 'timestamp', 'topic', 'user_id'];
  const contentFields = ['prev_content', 'prev_rendered_content', 'content_html_diff'];
  t.same(history.map((h) => Object.keys(h)), [
    base,
    [...base, ...contentFields],
    [...base, 'prev_topic'],
    [...base, 'prev_stream', 'stream'],
    [...base, 'prev_topic', ...contentFields],
  ], 'the fields of the original and of each edit, in the order the real server writes them');
  t.match(history[0], { topic: 'topic 1', content: 'content 1', rendered_content: '<p>content 1</p>', user_id: hamlet.id });
  t.match(history[1], { topic: 'topic 1', content: 'content 2', prev_content: 'content 1', user_id: hamlet.id,
    content_html_diff: `<div><p>content ${ins('2')} ${del('1')} </p></div>` });
  t.match(history[2], { topic: 'topic 2', prev_topic: 'topic 1', content: 'content 2' });
  t.match(history[3], { topic: 'topic 2', prev_stream: s1, stream: s2, user_id: iago.id });
  t.match(history[4], { topic: 'topic 3', prev_topic: 'topic 2', content: 'content 3', prev_content: 'content 2',
    content_html_diff: `<div><p>content ${ins('3')} ${del('2')} </p></div>` });
  const sent = await s.api('GET', `/messages/${m}`, hamlet);
  t.equal(history[4]!.timestamp, sent.body.message.last_edit_timestamp, "the newest entry's time is the last edit's");
  t.ok((history[0]!.timestamp as number) <= (history[1]!.timestamp as number));

  const dm = await sendDm(s, hamlet, [iago], 'a direct message');
  t.equal((await s.api('PATCH', `/messages/${dm}`, hamlet, { content: 'a direct note' })).status, 200);
  const direct = (await s.api('GET', `/messages/${dm}/history`, iago)).body.message_history as Snapshot[];
  t.same(direct.map((h) => h.topic), ['', ''], 'a direct message has an empty topic');
  t.equal(direct[1]!.content_html_diff, `<div><p>a direct ${ins('note')} ${del('message')} </p></div>`);
});

t.test('who may read the history, and the organization setting', async (t) => {
  const s = await shared;
  const hamlet = await s.user(Role.MEMBER, 'Hamlet');
  const othello = await s.user(Role.MEMBER, 'Othello');
  await createChannel(s, hamlet, 'private history', [othello], { invite_only: true, history_public_to_subscribers: false });
  const m = await sendStream(s, hamlet, 'private history', 'topic', 'secret words');
  t.equal((await s.api('PATCH', `/messages/${m}`, hamlet, { content: 'other secret words' })).status, 200);
  const outsider = await s.user(Role.MEMBER, 'Outsider');
  const refused = { result: 'error', code: 'BAD_REQUEST', msg: 'Invalid message(s)' };
  t.match((await s.api('GET', `/messages/${m}/history`, outsider)).body, refused, 'not subscribed: no history, no diff');
  await unsubscribe(s, othello, 'private history', [othello]);
  t.match((await s.api('GET', `/messages/${m}/history`, othello)).body, refused, 'a former subscriber of a private channel');
  t.match((await s.api('GET', '/messages/99999999/history', hamlet)).body, refused, 'no such message');

  t.equal((await s.api('PATCH', '/realm', s.owner, { allow_edit_history: false })).status, 200);
  try {
    const disabled = { result: 'error', code: 'BAD_REQUEST', msg: 'Message edit history is disabled in this organization' };
    t.match((await s.api('GET', `/messages/${m}/history`, hamlet)).body, disabled);
    t.match((await s.api('GET', '/messages/99999999/history', hamlet)).body, disabled, 'the setting is checked before the message is looked up');
    t.match((await s.api('GET', `/messages/${m}/history`, outsider)).body, disabled);
  } finally {
    await s.api('PATCH', '/realm', s.owner, { allow_edit_history: true });
  }
  t.equal((await s.api('GET', `/messages/${m}/history`, hamlet)).status, 200);
});
