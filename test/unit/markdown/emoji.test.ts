// Emoji in Markdown, by the real server's rules: `:name:`, emoticons when the sender translates them, and
// Unicode emoji characters (only whole catalogue codes; text-presentation characters stay text).
import t from 'tap';
import { renderMarkdown } from '../../../src/markdown/index.js';
import { testContext } from './fixtures.js';

const span = (code: string, name: string) => {
  const label = name.replace(/_/g, ' ');
  return `<span aria-label="${label}" class="emoji emoji-${code}" role="img" title="${label}">:${name}:</span>`;
};
const html = (input: string, translateEmoticons = false) => renderMarkdown(input, testContext({ translateEmoticons })).html;

t.test(':name: uses the real server’s names', async (t) => {
  t.equal(html(':smile:'), `<p>${span('1f642', 'smile')}</p>`);
  t.equal(html(':up:'), `<p>${span('2b06', 'up')}</p>`);
  t.equal(html(':+1: :thumbs_up:'), `<p>${span('1f44d', '+1')} ${span('1f44d', 'thumbs_up')}</p>`, 'an alias keeps the name it was written with');
  t.equal(html(':skin-tone-2: :man-girl-girl:'), '<p>:skin-tone-2: :man-girl-girl:</p>', 'not names on the real server');
  t.equal(html(':piña_colada:'), `<p>${span('1f965', 'piña_colada')}</p>`, 'names outside ASCII');
});

t.test('an unknown :name: takes its colons with it', async (t) => {
  t.equal(html('10:30:smile:'), '<p>10:30:smile:</p>', '":30:" is tried first and is no emoji');
  t.equal(html(':nopes: :smile:'), `<p>:nopes: ${span('1f642', 'smile')}</p>`);
});

t.test(':zulip: is Zulip’s own emoji, a custom emoji of the realm wins over a Unicode name', async (t) => {
  t.equal(html(':zulip:'), '<p><img alt=":zulip:" class="emoji" src="/static/generated/emoji/images/emoji/unicode/zulip.png" title="zulip"></p>');
  const ctx = testContext({ customEmojiByName: (name) => (name === 'smile' ? { id: 5, name, sourceUrl: '/user_avatars/2/emoji/images/5.png' } : undefined) });
  t.equal(renderMarkdown(':smile:', ctx).html, '<p><img alt=":smile:" class="emoji" src="/user_avatars/2/emoji/images/5.png" title="smile"></p>');
});

t.test('Unicode emoji characters', async (t) => {
  t.equal(html('🙂'), `<p>${span('1f642', 'smile')}</p>`);
  t.equal(html('☺️ and ☺'), `<p>${span('263a', 'smiling_face')} and ☺</p>`, 'a text-presentation character needs U+FE0F');
  t.equal(html('#️⃣ #⃣'), `<p>${span('0023-20e3', 'hash')} #⃣</p>`, 'a keycap needs U+FE0F too');
  t.equal(html('👨‍👧‍👧'), `<p>${span('1f468-200d-1f467-200d-1f467', 'family_man_girl_girl')}</p>`, 'a ZWJ sequence of the catalogue');
  t.equal(html('👍🏽'), '<p>👍🏽</p>', 'a skin-toned emoji is not in the catalogue: left whole');
  t.equal(html('🇺🇸🇺'), `<p>${span('1f1fa-1f1f8', 'flag_united_states')}🇺</p>`, 'a flag is a pair; a lone regional indicator is text');
  t.equal(html('© 1 →'), '<p>© 1 →</p>');
});

t.test('emoticons: only when the sender translates them, only between terminal symbols', async (t) => {
  t.notMatch(html(':) <3 :/'), 'emoji', 'off: left alone');
  t.equal(html(':) <3 :/', true), `<p>${span('1f642', 'smile')} ${span('2764', 'heart')} ${span('1f615', 'confused')}</p>`);
  t.equal(html('(:D) ;)!', true), `<p>(${span('1f600', 'grinning')}) ${span('1f609', 'wink')}!</p>`, 'brackets and punctuation are terminal');
  t.equal(html('f(:x) a:) http://x.org/:p', true).includes('emoji'), false, 'not inside words');
  t.equal(html('`:)`', true), '<p><code>:)</code></p>', 'not in code');
  t.equal(html(':):smile:', true), `<p>:)${span('1f642', 'smile')}</p>`, 'an emoticon against a :name: is not one');
  t.equal(html(':Dx:', true), '<p>:Dx:</p>', 'nor inside an unknown :name:');
});
