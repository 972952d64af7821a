// Issue 24 item 1: Markdown that nests too deeply or would take too long to render is refused with the real
// server's error ("Unable to render message"), quickly, never with a 500, and the event loop stays responsive.
import t from 'tap';
import { createChannel } from '../helpers/channels-fixture.js';
import { Role, startTestServer } from '../helpers/server.js';

const adversarial: [string, string][] = [
  ['quote fences', '```quote\n'.repeat(1100)],
  ['spoiler fences', '```spoiler a\n'.repeat(750)],
  ['tilde quote fences', '~~~quote\n'.repeat(1100)],
  ['bullet markers', '- '.repeat(4900)],
  ['bullet markers with text', `${'- '.repeat(4900)}x`],
  ['quote markers', `${'>'.repeat(3000)} x`],
  ['numbered markers', '1. '.repeat(3300)],
  ['quoted bullets', '> - '.repeat(2400)],
  ['indented bullets', Array.from({ length: 95 }, (_, i) => `${' '.repeat(i * 2)}- a`).join('\n')],
  ['nested emphasis', `${'*'.repeat(4000)}a${'*'.repeat(4000)}`],
  ['emphasis pairs', '*a'.repeat(5000)],
  ['unclosed times', '<time:'.repeat(1666)],
  ['deep indentation', `${' '.repeat(9999)}a`],
];

t.test('deep or slow Markdown is refused quickly with the real error', async (t) => {
  const s = await startTestServer(t);
  const guest = await s.user(Role.GUEST, 'Guest');
  const member = await s.user(Role.MEMBER, 'Member');
  await createChannel(s, member, 'dos', [guest]);
  // The first render of a process loads and compiles the renderer; that is not what is measured here.
  t.equal((await s.api('POST', '/messages/render', guest, { content: '*warm* `up`' })).status, 200);
  // Large messages render in worker threads, which start on first use (plain text renders in place: the
  // emphasis makes this one go to a worker).
  await s.api('POST', '/messages/render', guest, { content: '*warm* '.repeat(1_000) });
  for (const [name, content] of adversarial) {
    for (const [path, params, as] of [
      ['/messages/render', { content }, guest],
      ['/messages', { type: 'stream', to: 'dos', topic: 'dos', content }, member],
    ] as const) {
      const started = performance.now();
      const r = await s.api('POST', path, as, params);
      const elapsed = performance.now() - started;
      t.ok(elapsed < 2000, `${name} via ${path} answers in ${elapsed.toFixed(0)} ms`);
      t.not(r.status, 500, `${name} via ${path} is not a server error`);
      if (r.status !== 200) t.same(r.body, { result: 'error', code: 'BAD_REQUEST', msg: 'Unable to render message' }, `${name} via ${path}`);
    }
  }
  const live = await s.fastify.inject({ method: 'GET', url: '/health/live' });
  t.equal(live.statusCode, 200);
});

t.test('ordinary nesting still renders', async (t) => {
  const s = await startTestServer(t);
  const member = await s.user(Role.MEMBER, 'Member');
  const render = async (content: string) => {
    const r = await s.api('POST', '/messages/render', member, { content });
    t.equal(r.status, 200, content.slice(0, 40));
    return r.body.rendered as string;
  };
  const quoted = await render('````quote\n```quote\n```quote\ninner\n```\n```\n````');
  t.equal((quoted.match(/<blockquote>/g) ?? []).length, 3);
  const list = await render(Array.from({ length: 8 }, (_, i) => `${'  '.repeat(i)}- level ${i}`).join('\n'));
  t.equal((list.match(/<ul>/g) ?? []).length, 8);
  const quotes = await render(`${'>'.repeat(10)} deep`);
  t.equal((quotes.match(/<blockquote>/g) ?? []).length, 10);
  t.match(await render('```spoiler Header\nsecret\n```'), /spoiler-block/);
});
