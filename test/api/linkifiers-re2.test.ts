// Linkifier patterns are RE2 patterns, as on the real server: what RE2 refuses is rejected at creation with RE2's
// own error text, and what it accepts is matched in linear time, so no pattern can stall rendering.
import t from 'tap';
import { createChannel, sendStream } from '../helpers/channels-fixture.js';
import { Role, startTestServer } from '../helpers/server.js';

t.test('patterns RE2 refuses get the real server error', async (t) => {
  const s = await startTestServer(t);
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  const post = (pattern: string) => s.api('POST', '/realm/filters', admin, { pattern, url_template: 'https://x.example.com/{id}' });
  const cases: [string, string][] = [
    ['(?P<id>\\d+)(?!x)', 'Bad regular expression: invalid perl operator: (?!'],
    ['(?P<id>a)\\1', 'Bad regular expression: invalid escape sequence: \\1'],
    ['#(?P<id>\\d+', 'Bad regular expression: missing ): #(?P<id>\\d+'],
    ['(?<=#)(?P<id>\\d+)', 'Bad regular expression: invalid named capture group: (?<=#)(?P<id>'],
    ['(?P<id>[z-a])', 'Bad regular expression: invalid character class range: z-a'],
  ];
  for (const [pattern, msg] of cases) {
    const r = await post(pattern);
    t.equal(r.status, 400, pattern);
    // The model's clean compiles the pattern (the field has no validator): a non-field error.
    t.same(r.body, { result: 'error', code: 'BAD_REQUEST', msg, errors: { __all__: [msg] } }, pattern);
  }
  const id = (await post('#(?P<id>\\d+)')).body.id as number;
  const update = await s.api('PATCH', `/realm/filters/${id}`, admin, { pattern: '(?P<id>\\d+)(?=x)', url_template: 'https://x.example.com/{id}' });
  t.equal(update.body.msg, 'Bad regular expression: invalid perl operator: (?=', 'update is checked the same way');
});

t.test('a catastrophic-backtracking pattern costs linear time on send, render and read', async (t) => {
  const s = await startTestServer(t);
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  const member = await s.user(Role.MEMBER, 'Member');
  const added = await s.api('POST', '/realm/filters', admin, { pattern: '(?P<id>(a+)+c)', url_template: 'https://x.example.com/{id}' });
  t.equal(added.status, 200, 'RE2 compiles it, so the real server accepts it');
  await createChannel(s, admin, 'dos', [member]);
  const evil = `${'a'.repeat(32)}!`;
  const timed = async <T>(what: string, run: () => Promise<T>): Promise<T> => {
    const started = performance.now();
    const result = await run();
    t.ok(performance.now() - started < 2000, `${what} answers quickly`);
    return result;
  };
  const rendered = await timed('render', () => s.api('POST', '/messages/render', member, { content: evil }));
  t.equal(rendered.status, 200);
  t.equal(rendered.body.rendered, `<p>${evil}</p>`);
  await timed('send', () => sendStream(s, member, 'dos', evil, evil));
  const read = await timed('read', () => s.api('GET', '/messages', member, { anchor: 'newest', num_before: 5, num_after: 0 }));
  t.same(read.body.messages.at(-1).topic_links, []);
  // The pattern still links what it should.
  const good = await s.api('POST', '/messages/render', member, { content: 'see aaac now' });
  t.equal(good.body.rendered, '<p>see <a href="https://x.example.com/aaac">aaac</a> now</p>');
});
