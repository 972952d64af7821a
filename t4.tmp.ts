import { readFileSync } from 'node:fs';
import { renderMarkdown } from './src/markdown/index.ts';
import { testContext } from './test/unit/markdown/fixtures.ts';
const cases = JSON.parse(readFileSync('../shared/reference/zulip-markdown-cases.json', 'utf8'));
const ctx = testContext();
let ok = 0, n = 0;
const only = process.argv[2];
for (const c of cases.regular_tests) {
  if (only && !c.name.includes(only)) continue;
  n++;
  let actual; try { actual = renderMarkdown(c.input, ctx).html; } catch (e) { actual = 'THROW ' + (e as Error).stack; }
  if (actual === c.expected_output) ok++; else console.log('FAIL', c.name, '\n  got ', JSON.stringify(actual).slice(0, 700), '\n  want', JSON.stringify(c.expected_output).slice(0, 700));
}
for (const [input, template, url] of cases.linkify_tests) {
  if (only) continue;
  n++;
  const plain = url.replace(/&amp;/g, '&');
  const href = /^https?:/.test(plain) ? url : plain.includes('@') ? `mailto:${url}` : `http://${url}`;
  const exp = url === '' ? template : template.replace('%s', `<a href="${href}">${url}</a>`);
  const actual = renderMarkdown(input, ctx).html;
  if (actual === exp) ok++; else console.log('FAIL linkify', JSON.stringify(input), '\n  got ', JSON.stringify(actual), '\n  want', JSON.stringify(exp));
}
console.log(ok + '/' + n);
