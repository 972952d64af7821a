import t from 'tap';
import { clientName } from '../../../src/http/client-name.js';

t.test('names from User-Agents, by the real server pattern', async (t) => {
  const cases: Array<[string | undefined, string]> = [
    ['ZulipMobile/27.192 (Android 14)', 'ZulipMobile'],
    ['ZulipElectron/5.11.1 Mozilla/5.0 (X11; Linux x86_64)', 'ZulipElectron'],
    ['ZulipPython/0.9.0 (Linux; Python 3.11)', 'ZulipPython'],
    ['Zulip Terminal/0.7.0', 'Zulip Terminal'],
    ['Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36', 'Mozilla'],
    ['curl/8.5.0', 'curl'],
    ['website', 'website'],
    ['Java 1.8', 'Java'],
    ['a(b', 'a(b'],
    ['', ''],
    [undefined, 'Unspecified'],
  ];
  for (const [agent, name] of cases) t.equal(clientName(undefined, agent), name, String(agent));
});

t.test('a client parameter wins, and names are cut to 30 characters', async (t) => {
  t.equal(clientName('ZulipMobile', 'curl/8.5.0'), 'ZulipMobile');
  t.equal(clientName(['a', 'b'], 'curl/8.5.0'), 'curl', 'a repeated parameter is no name');
  t.equal(clientName('x'.repeat(40), undefined), 'x'.repeat(30));
  t.equal(clientName(undefined, `${'y'.repeat(40)}/1.0`), 'y'.repeat(30));
});
