// Renders every case of the real Zulip server's Markdown fixtures and compares HTML exactly. Cases that do not
// match yet are listed, each with its reason, in known-differences.json; the test fails when a listed case
// starts to match (take it off the list) and when an unlisted case stops matching.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { findReference } from '../../helpers/repo-root.js';
import t from 'tap';
import { renderMarkdownAsync } from '../../../src/markdown/index.js';
import { testContext } from './fixtures.js';

interface RegularCase {
  name: string;
  input: string;
  expected_output: string;
  /** the sender's setting the case renders with (off when absent) */
  translate_emoticons?: boolean;
}
type LinkifyCase = [input: string, template: string, url: string];

const here = path.dirname(fileURLToPath(import.meta.url));
const casesFile = findReference('zulip-markdown-cases.json');
const cases = JSON.parse(readFileSync(casesFile, 'utf8')) as { regular_tests: RegularCase[]; linkify_tests: LinkifyCase[] };
const knownDifferences = JSON.parse(readFileSync(path.join(here, 'known-differences.json'), 'utf8')) as Record<string, string>;

// The fixtures' linkify table gives the link text; the href is the text itself for http(s) URLs, mailto: for
// addresses, and http:// in front of bare domains.
function linkifyExpected([, template, url]: LinkifyCase): string {
  if (url === '') return template;
  const plain = url.replace(/&amp;/g, '&');
  const href = /^https?:/.test(plain) ? url : plain.includes('@') ? `mailto:${url}` : `http://${url}`;
  return template.replace('%s', `<a href="${href}">${url}</a>`);
}

const all = [
  ...cases.regular_tests.map((c) => ({ name: c.name, input: c.input, expected: c.expected_output, translateEmoticons: c.translate_emoticons === true })),
  ...cases.linkify_tests.map((c) => ({ name: `linkify: ${c[0]}`, input: c[0], expected: linkifyExpected(c), translateEmoticons: false })),
];

const ctx = testContext();
const emoticonCtx = testContext({ translateEmoticons: true });
let exact = 0;
for (const { name, input, expected, translateEmoticons } of all) {
  const actual = (await renderMarkdownAsync(input, translateEmoticons ? emoticonCtx : ctx)).html;
  const matches = actual === expected;
  if (matches) exact++;
  if (name in knownDifferences) {
    t.notOk(matches, `${name}: listed as a known difference but now matches; remove it from known-differences.json`);
  } else {
    t.equal(actual, expected, name);
  }
}

for (const name of Object.keys(knownDifferences)) {
  t.ok(all.some((c) => c.name === name), `known difference "${name}" names a fixture case`);
}

t.comment(`markdown conformance: ${exact}/${all.length} exact`);
