// A render context as plain data, so that it can cross to a render worker (structured clone carries no
// functions). Realm render data is built from a snapshot, so both threads look names up the same way.
import type { CustomEmoji, LinkableChannel, Linkifier, MentionableGroup, MentionableUser, RenderContext } from './types.js';

export interface RenderContextSnapshot {
  /** Unique per snapshot: a worker keeps the contexts it has seen by this key. */
  key: string;
  realmUrl: string;
  users: MentionableUser[];
  groups: MentionableGroup[];
  channels: LinkableChannel[];
  linkifiers: Linkifier[];
  customEmoji: CustomEmoji[];
  /** The realm's default_code_block_language ('' or absent: none). */
  defaultCodeBlockLanguage?: string;
}

let counter = 0;

export function newSnapshotKey(): string {
  counter += 1;
  return `${process.pid}:${counter}`;
}

export function contextFromSnapshot(snapshot: RenderContextSnapshot): RenderContext {
  const byName = new Map<string, MentionableUser[]>();
  const byId = new Map<number, MentionableUser>();
  for (const user of snapshot.users) {
    byId.set(user.id, user);
    const key = user.fullName.toLowerCase();
    const same = byName.get(key);
    if (same) same.push(user);
    else byName.set(key, [user]);
  }
  const channels = new Map(snapshot.channels.map((c) => [c.name.toLowerCase(), c]));
  const groups = new Map(snapshot.groups.map((g) => [g.name.toLowerCase(), g]));
  const emoji = new Map(snapshot.customEmoji.map((e) => [e.name, e]));
  return {
    realmUrl: snapshot.realmUrl,
    userByName: (name) => byName.get(name.toLowerCase()) ?? [],
    userById: (id) => byId.get(id),
    groupByName: (name) => groups.get(name.toLowerCase()),
    channelByName: (name) => channels.get(name.toLowerCase()),
    linkifiers: snapshot.linkifiers,
    customEmojiByName: (name) => emoji.get(name),
    defaultCodeBlockLanguage: snapshot.defaultCodeBlockLanguage || undefined,
    snapshot,
  };
}

export const emptySnapshot = (realmUrl: string): RenderContextSnapshot => ({
  key: newSnapshotKey(),
  realmUrl,
  users: [],
  groups: [],
  channels: [],
  linkifiers: [],
  customEmoji: [],
});
