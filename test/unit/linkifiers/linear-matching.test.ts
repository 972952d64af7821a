// Linkifier matching runs in linear time whatever the pattern, and a stored pattern the engine refuses
// (written before patterns were checked with RE2) simply never matches.
import t from 'tap';
import { findLinkifierMatches } from '../../../src/markdown/linkifiers.js';
import { renderTopicLinks } from '../../../src/markdown/topic-links.js';

const linkifier = (id: number, pattern: string, urlTemplate = 'https://x.example.com/{id}') => ({ id, pattern, urlTemplate });

t.test('nested quantifiers do not backtrack', async (t) => {
  const evil = `${'a'.repeat(20_000)}!`;
  const started = performance.now();
  t.same(findLinkifierMatches(evil, [linkifier(1, '(?P<id>(a+)+c)')], ''), []);
  t.same(renderTopicLinks(evil.slice(0, 60), [linkifier(1, '(?P<id>(a+)+c)'), linkifier(2, '(?P<id>(a|aa)+$)')]).length, 1);
  t.ok(performance.now() - started < 1000, 'linear time');
});

t.test('patterns the engine refuses match nothing', async (t) => {
  for (const pattern of ['(?<=#)(?P<id>\\d+)', '(?P<id>a)\\1', '(?P<id>\\d+)(?!x)', '(?P<id>\\d+']) {
    t.same(findLinkifierMatches('#123 a a 123x', [linkifier(1, pattern)], ''), [], pattern);
  }
});

t.test('boundaries: after whitespace, an opening bracket or quote, a comma or colon; never into a word', async (t) => {
  const found = (text: string) => findLinkifierMatches(text, [linkifier(1, '#(?P<id>[0-9]+)')], '').map((m) => [m.start, m.text, m.url]);
  t.same(found('#1 #2'), [[0, '#1', 'https://x.example.com/1'], [3, '#2', 'https://x.example.com/2']]);
  t.same(found('#1#2 x#3 (#4) "#5",:#6'), [
    [0, '#1', 'https://x.example.com/1'],
    [10, '#4', 'https://x.example.com/4'],
    [15, '#5', 'https://x.example.com/5'],
    [20, '#6', 'https://x.example.com/6'],
  ]);
  t.same(found('😀 #7 é#8 #9é'), [[3, '#7', 'https://x.example.com/7']]);
  t.same(found('(#10)'), [[1, '#10', 'https://x.example.com/10']]);
  t.same(findLinkifierMatches('JS-12', [linkifier(1, 'JS-(?<id>\\d+)')], '').map((m) => m.url), ['https://x.example.com/12'], 'JavaScript-style group names');
  t.same(findLinkifierMatches('ab AB', [linkifier(1, '(?i)(?P<id>ab)')], '').map((m) => m.text), ['ab', 'AB'], 'inline flags');
});

t.test('earlier linkifiers win overlaps', async (t) => {
  const matches = findLinkifierMatches('PR-12 x', [linkifier(1, 'PR-(?P<id>\\d+)', 'https://pr.example.com/{id}'), linkifier(2, '(?P<id>\\d+)')], '');
  t.same(matches.map((m) => m.url), ['https://pr.example.com/12']);
});
