import t from 'tap';
import { startTestServer, Role } from '../helpers/server.js';

// translate_emoticons is the sender's setting: with it on, ":)" is sent as the real server's :smile: (U+1F642).
const smile = '<span aria-label="smile" class="emoji emoji-1f642" role="img" title="smile">:smile:</span>';

t.test('emoticons are translated for a sender who turned translate_emoticons on, and only for them', async (t) => {
  const s = await startTestServer(t);
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  await s.api('POST', '/users/me/subscriptions', alice, { subscriptions: [{ name: 'faces' }] });
  await s.api('POST', '/users/me/subscriptions', bob, { subscriptions: [{ name: 'faces' }] });
  const send = async (u: typeof alice, content: string) => {
    const id = (await s.api('POST', '/messages', u, { type: 'stream', to: 'faces', topic: 't', content })).body.id as number;
    return (await s.api('GET', `/messages/${id}`, alice)).body.message.content as string;
  };
  t.equal(await send(alice, 'hi :)'), '<p>hi :)</p>', 'off by default');
  t.equal((await s.api('PATCH', '/settings', alice, { translate_emoticons: true })).status, 200);
  t.equal(await send(alice, 'hi :)'), `<p>hi ${smile}</p>`);
  t.equal(await send(bob, 'hi :)'), '<p>hi :)</p>', 'another sender’s setting is theirs');
  t.equal((await s.api('POST', '/messages/render', alice, { content: 'so :)' })).body.rendered, `<p>so ${smile}</p>`, 'previews render as sends do');
  t.equal((await s.api('POST', '/messages/render', bob, { content: 'so :)' })).body.rendered, '<p>so :)</p>');

  const id = (await s.api('POST', '/messages', alice, { type: 'stream', to: 'faces', topic: 't', content: 'x' })).body.id as number;
  t.equal((await s.api('PATCH', `/messages/${id}`, alice, { content: 'edited :)' })).status, 200);
  t.equal((await s.api('GET', `/messages/${id}`, alice)).body.message.content, `<p>edited ${smile}</p>`, 'edits too');
  t.equal((await s.api('PATCH', '/settings', alice, { translate_emoticons: false })).status, 200);
  t.equal(await send(alice, 'hi :)'), '<p>hi :)</p>', 'and off again');
});
