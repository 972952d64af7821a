// A topic's links follow the real server's topic rules, not the message body's: linkifiers first, in their order;
// then the first bare URL of each piece of the topic between spaces and `!;),'"`, given https:// when it has no
// scheme; a match overlapping one taken before it is dropped; the rest in topic order.
import t from 'tap';
import { renderTopicLinks } from '../../../src/markdown/topic-links.js';

const linkifier = (id: number, pattern: string, urlTemplate: string) => ({ id, pattern, urlTemplate });
const trac = linkifier(1, '#(?P<id>[0-9]{2,8})', 'https://trac.example.com/ticket/{id}');

t.test('bare URLs: https:// when there is no scheme, and none across the piece separators', async (t) => {
  t.same(renderTopicLinks('Without scheme google.com/hello-world', []), [{ text: 'google.com/hello-world', url: 'https://google.com/hello-world' }]);
  t.same(renderTopicLinks('google.in google.com', []), [
    { text: 'google.in', url: 'https://google.in' },
    { text: 'google.com', url: 'https://google.com' },
  ]);
  t.same(renderTopicLinks('Have you seen github.com/zulip?', []), [{ text: 'github.com/zulip', url: 'https://github.com/zulip' }]);
  t.same(renderTopicLinks('http://example.com/a', []), [{ text: 'http://example.com/a', url: 'http://example.com/a' }]);
  t.same(renderTopicLinks('see google.com/a,b', []), [{ text: 'google.com/a', url: 'https://google.com/a' }]);
  t.same(renderTopicLinks('https://example.com/foo!bar', []), [{ text: 'https://example.com/foo', url: 'https://example.com/foo' }]);
  // One URL per piece: a no-break space does not separate pieces.
  t.same(renderTopicLinks('google.com\u00a0google.in', []), [{ text: 'google.com', url: 'https://google.com' }]);
  t.same(renderTopicLinks('mail foo@example.com', []), [{ text: 'foo@example.com', url: 'https://foo@example.com' }]);
  t.same(renderTopicLinks('HTTP://EXAMPLE.COM and GOOGLE.COM', []), []);
});

t.test('linkifiers come first, in their order; a later match overlapping a taken one is dropped', async (t) => {
  t.same(renderTopicLinks('#1234 and https://example.com/#1235', [trac]), [
    { text: '#1234', url: 'https://trac.example.com/ticket/1234' },
    { text: 'https://example.com/#1235', url: 'https://example.com/#1235' },
  ]);
  const word = linkifier(2, 'ticket (?P<id>[0-9]+)', 'https://tickets.example.com/{id}');
  t.same(renderTopicLinks('ticket #123 ticket 45', [trac, word]), [
    { text: '#123', url: 'https://trac.example.com/ticket/123' },
    { text: 'ticket 45', url: 'https://tickets.example.com/45' },
  ]);
  // A linkifier's match counts from the character before it: "#12" after "foo:" overlaps "foo:".
  const foo = linkifier(3, 'foo:', 'https://foo.example/');
  t.same(renderTopicLinks('foo:#12', [foo, trac]), [{ text: 'foo:', url: 'https://foo.example/' }]);
  t.same(renderTopicLinks('#12 foo:', [foo, trac]), [
    { text: '#12', url: 'https://trac.example.com/ticket/12' },
    { text: 'foo:', url: 'https://foo.example/' },
  ]);
});

t.test("a linkifier's URL is sent as its template expands it; an unsafe one gives no link", async (t) => {
  t.same(renderTopicLinks('#12', [linkifier(4, '#(?P<id>[0-9]+)', 'tickets/{id}')]), [{ text: '#12', url: 'tickets/12' }]);
  t.same(renderTopicLinks('#12', [linkifier(5, '#(?P<id>[0-9]+)', 'javascript:alert({id})')]), []);
});
