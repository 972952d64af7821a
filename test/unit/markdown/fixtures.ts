// Realm data for the Markdown tests, shaped like the real server's test database where fixtures depend on it.
import type { CustomEmoji, LinkableChannel, Linkifier, MentionableGroup, MentionableUser, RenderContext } from '../../../src/markdown/index.js';

export const users: MentionableUser[] = [
  { id: 8, fullName: "Cordelia, Lear's daughter", email: 'cordelia@zulip.com' },
  { id: 10, fullName: 'King Hamlet', email: 'hamlet@zulip.com' },
  { id: 12, fullName: 'Othello, the Moor of Venice', email: 'othello@zulip.com' },
  { id: 11, fullName: 'Iago', email: 'iago@zulip.com' },
  { id: 20, fullName: 'Twin', email: 'twin1@zulip.com' },
  { id: 21, fullName: 'Twin', email: 'twin2@zulip.com' },
  { id: 30, fullName: 'Former Employee', email: 'former@zulip.com', isActive: false },
];
export const groups: MentionableGroup[] = [
  { id: 17, name: 'support' },
  { id: 18, name: 'hamletcharacters' },
];
export const channels: LinkableChannel[] = [
  { id: 1, name: 'Denmark' },
  { id: 3, name: 'Verona' },
  { id: 9, name: 'Zulip updates.' },
];
export const linkifiers: Linkifier[] = [
  { id: 1, pattern: '#(?P<id>[0-9]{2,8})', urlTemplate: 'https://trac.example.com/ticket/{id}' },
  { id: 2, pattern: 'ZUL-(?P<id>[0-9]+)', urlTemplate: 'https://zulip.example.com/issues/{id}' },
];
export const customEmoji: CustomEmoji[] = [{ id: 1, name: 'green_tick', sourceUrl: '/user_avatars/2/emoji/images/1.png' }];

export function testContext(overrides: Partial<RenderContext> = {}): RenderContext {
  return {
    realmUrl: 'http://zulip.testserver',
    userByName: (name) => users.filter((u) => u.fullName.toLowerCase() === name.toLowerCase()),
    userById: (id) => users.find((u) => u.id === id),
    groupByName: (name) => groups.find((g) => g.name === name),
    channelByName: (name) => channels.find((c) => c.name === name),
    linkifiers,
    customEmojiByName: (name) => customEmoji.find((e) => e.name === name),
    ...overrides,
  };
}
