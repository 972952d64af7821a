import t from 'tap';
import { decideLinkifiers, evolveLinkifiers, type LinkifierRow } from '../../../src/domain/linkifiers/decider.js';
import { decidePlaygrounds } from '../../../src/domain/playgrounds/decider.js';

const admin = { user_id: 1, role: 200 };

t.test('linkifiers: given events, the list; reorder needs every id once', async (t) => {
  let list: LinkifierRow[] = [];
  const state = () => ({ realm_id: 1, linkifiers: list });
  for (const [id, pattern] of [[5, 'A(?P<n>\\d+)'], [6, 'B(?P<n>\\d+)']] as const) {
    for (const e of decideLinkifiers({ type: 'AddLinkifier', actor: admin, linkifier_id: id, pattern, url_template: 'https://x.com/{n}' }, state())) {
      list = evolveLinkifiers(list, e);
    }
  }
  t.same(list.map((l) => [l.id, l.order]), [[5, 0], [6, 1]]);
  for (const e of decideLinkifiers({ type: 'ReorderLinkifiers', actor: admin, ordered_linkifier_ids: [6, 5] }, state())) list = evolveLinkifiers(list, e);
  t.same(list.map((l) => l.id), [6, 5]);
  t.throws(() => decideLinkifiers({ type: 'ReorderLinkifiers', actor: admin, ordered_linkifier_ids: [6, 7] }, state()),
    { message: 'The ordered list must enumerate all existing linkifiers exactly once' });
  t.throws(() => decideLinkifiers({ type: 'RemoveLinkifier', actor: { user_id: 2, role: 400 }, linkifier_id: 5 }, state()), { code: 'UNAUTHORIZED_PRINCIPAL' });
  // A new linkifier goes after the last one even when orders have gaps.
  const [added] = decideLinkifiers({ type: 'AddLinkifier', actor: admin, linkifier_id: 9, pattern: 'C(?P<n>\\d+)', url_template: 'https://x.com/{n}' }, state());
  t.match(added, { type: 'LinkifierAdded', data: { order: 2 } });
});

t.test('playgrounds: exactly one variable named code', async (t) => {
  const state = { realm_id: 1, playgrounds: [] };
  const add = (url_template: string) => decidePlaygrounds({ type: 'AddPlayground', actor: admin, playground_id: 1, name: 'P', pygments_language: 'Python', url_template }, state);
  t.match(add('https://p.com/?c={code}'), [{ type: 'PlaygroundAdded' }]);
  t.match(add('https://p.com/{+code}'), [{ type: 'PlaygroundAdded' }], 'any operator');
  // The real server compares the set of variable names: `code` twice is still only `code`.
  t.match(add('https://p.com/{code}{code}'), [{ type: 'PlaygroundAdded' }]);
  t.throws(() => add('https://p.com/{code}{src}'), { message: '"code" should be the only variable present in the URL template' });
  t.throws(() => add('https://p.com/{src}'), { message: 'Missing the required variable "code" in the URL template' });
});
