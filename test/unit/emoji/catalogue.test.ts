// The emoji catalogue against the real server's name table (shared/reference/zulip-emoji.json) and its set.
import { readFileSync } from 'node:fs';
import t from 'tap';
import { findReference } from '../../helpers/repo-root.js';
import {
  codeOfCharacters,
  currentUnicodeEmojiName,
  emojiCategories,
  emojiDataDocument,
  emoticonTranslations,
  remappedCode,
  unicodeEmojiByCode,
  unicodeEmojiByName,
  unicodeEmojiNames,
} from '../../../src/emoji/catalogue.js';

const reference = JSON.parse(readFileSync(findReference('zulip-emoji.json'), 'utf8')) as {
  emoji_name_maps: Record<string, { canonical_name: string; aliases: string[] }>;
  emoticon_conversions: Record<string, string>;
  remapped_emojis: Record<string, string>;
};

t.test('names are the real server’s, not emojibase’s', async (t) => {
  t.same(unicodeEmojiByName('smile'), { code: '1f642', name: 'smile' }, 'smile is the slightly smiling face');
  t.same(unicodeEmojiByName('big_smile'), { code: '1f604', name: 'big_smile' });
  t.equal(unicodeEmojiByName('up')?.code, '2b06', 'up exists');
  t.equal(unicodeEmojiByName('holiday_tree')?.code, '1f384');
  t.equal(unicodeEmojiByName('christmas_tree'), undefined);
  t.equal(unicodeEmojiByName('fried_egg'), undefined);
  t.equal(unicodeEmojiByName('slight_smile'), undefined);
  for (const notAName of ['skin-tone-2', 'skin_tone_2', 'man-girl-girl', 'thumbsup_tone1', 'regional_indicator_u', 'zulip']) {
    t.equal(unicodeEmojiByName(notAName), undefined, `${notAName} is not a Unicode emoji name`);
  }
});

t.test('aliases lead to the same code; a code gives its canonical name first', async (t) => {
  t.same(unicodeEmojiByName('+1'), { code: '1f44d', name: '+1' });
  t.same(unicodeEmojiByName('thumbs_up'), { code: '1f44d', name: 'thumbs_up' });
  t.same(unicodeEmojiByName('relaxed'), { code: '263a', name: 'relaxed' });
  t.same(unicodeEmojiByCode('263a'), { code: '263a', name: 'smiling_face' });
  t.same(unicodeEmojiNames('2764'), ['heart', 'love', 'love_you']);
  t.same(unicodeEmojiByCode('1f468-200d-1f467-200d-1f467'), { code: '1f468-200d-1f467-200d-1f467', name: 'family_man_girl_girl' });
});

t.test('codes are exact: unqualified, lowercase, no skin tones', async (t) => {
  t.equal(unicodeEmojiByCode('1F642'), undefined);
  t.equal(unicodeEmojiByCode('263a-fe0f'), undefined);
  t.equal(unicodeEmojiByCode('1f44d-1f3fb'), undefined, 'a skin-toned thumbs up is not in the catalogue');
  t.equal(unicodeEmojiByCode('1f3fb'), undefined, 'nor is a skin tone modifier');
  t.equal(codeOfCharacters('\u263a\ufe0f'), '263a');
  t.equal(codeOfCharacters('#\ufe0f\u20e3'), '0023-20e3');
  t.equal(codeOfCharacters('👁‍🗨'), '1f441-200d-1f5e8');
});

t.test('remapped legacy codes', async (t) => {
  t.equal(remappedCode('1f1fa'), '1f1fa-1f1f8');
  t.equal(remappedCode('0023'), '0023-20e3');
  t.equal(remappedCode('1f642'), '1f642', 'any other code is itself');
  t.equal(remappedCode('constructor'), 'constructor');
  for (const [from, to] of Object.entries(reference.remapped_emojis)) {
    t.equal(unicodeEmojiByCode(from), undefined, `${from} is not a current code`);
    t.ok(unicodeEmojiByCode(to), `${from} → ${to}, a current code`);
  }
});

t.test('every name of the reference table, and nothing else', async (t) => {
  const doc = emojiDataDocument().code_to_names;
  const expected = Object.fromEntries(Object.entries(reference.emoji_name_maps).map(([code, info]) => [code, [info.canonical_name, ...info.aliases]]));
  t.same(doc, expected, 'the served document is the table, canonical name first');
  let mismatches = 0;
  for (const [code, names] of Object.entries(expected)) {
    for (const name of names) if (unicodeEmojiByName(name)?.code !== code) mismatches++;
    if (unicodeEmojiByCode(code)?.name !== names[0]) mismatches++;
  }
  t.equal(mismatches, 0);
});

t.test('emoticons come from the table and name real emoji', async (t) => {
  t.same(Object.fromEntries(emoticonTranslations.map((e) => [e.emoticon, `:${e.name}:`])), reference.emoticon_conversions);
  t.same(emoticonTranslations.find((e) => e.emoticon === ':)'), { emoticon: ':)', name: 'smile', code: '1f642' });
  t.same(emoticonTranslations.find((e) => e.emoticon === '<3'), { emoticon: '<3', name: 'heart', code: '2764' });
});

t.test('categories: the set’s categories and order, named emoji only', async (t) => {
  const categories = emojiCategories();
  t.ok(categories['Smileys & Emotion']!.length > 100);
  const faces = categories['Smileys & Emotion']!;
  t.ok(faces.indexOf('1f600') < faces.indexOf('1f642'), 'grinning comes before smile, in the set’s order');
  const all = Object.values(categories).flat();
  t.equal(all.length, Object.keys(reference.emoji_name_maps).length, 'every named emoji is in one category');
  t.notOk('Component' in categories, 'skin tone components are not pickable');
});

t.test('stored names from the old table read as the current ones', async (t) => {
  t.equal(currentUnicodeEmojiName('1f604', 'smile'), 'big_smile', 'emojibase’s smile on U+1F604');
  t.equal(currentUnicodeEmojiName('1f44d', 'thumbs_up'), 'thumbs_up', 'an alias that still names its code stays');
  t.equal(currentUnicodeEmojiName('1f642', 'smile'), 'smile');
  t.equal(currentUnicodeEmojiName('1f55b', 'clock12'), 'clock12', 'a code outside the catalogue keeps its name');
});
