import type { Db } from '../db/database.js';
import { contextFromSnapshot, newSnapshotKey } from '../markdown/context-snapshot.js';
import type { RenderContext } from '../markdown/index.js';
import { emojiImageUrl } from '../read/realm-emoji.js';
import { canMentionGroupId } from '../read/user-groups.js';
import { errors } from '../domain/errors.js';
import type { ServiceContext } from './context.js';

/** What rendering and per-recipient flagging need from a realm, loaded once and reused. */
export interface RealmRenderData {
  context: RenderContext;
  /** group id → every member, subgroups included */
  groupMembers: Map<number, number[]>;
  /** group id → its name and the group whose members may mention it */
  groupMentionRules: Map<number, { name: string; can_mention_group: number }>;
  /** user id → lower-cased alert words */
  alertWords: Map<number, string[]>;
  /** active outgoing webhook bots (a send decides which of them it triggers) */
  outgoingWebhookBots: ReadonlySet<number>;
}

interface CacheEntry {
  version: number;
  data: RealmRenderData;
}

/** Every read table loadRenderData reads. */
export const RENDER_TABLES = ['realms', 'users', 'streams', 'user_groups', 'user_group_members', 'user_group_subgroups', 'linkifiers', 'alert_words', 'realm_emoji'];

// Per database (a process may serve several, e.g. in tests), then per realm.
const caches = new WeakMap<object, { entries: Map<number, CacheEntry>; loading: Map<number, { version: number; promise: Promise<RealmRenderData> }> }>();

/** The render data of a realm, cached while none of the read tables it comes from has changed. */
export async function realmRenderData(ctx: ServiceContext, realmId: number): Promise<RealmRenderData> {
  const version = ctx.tablesVersion(RENDER_TABLES);
  let perDb = caches.get(ctx.db);
  if (!perDb) caches.set(ctx.db, (perDb = { entries: new Map(), loading: new Map() }));
  const { entries: cache, loading } = perDb;
  const entry = cache.get(realmId);
  if (entry && entry.version === version) return entry.data;
  const pending = loading.get(realmId);
  if (pending && pending.version === version) return pending.promise;
  const promise = loadRenderData(ctx.db, realmId).then((data) => {
    if ((cache.get(realmId)?.version ?? -1) <= version) cache.set(realmId, { version, data });
    return data;
  });
  const done = () => {
    if (loading.get(realmId)?.promise === promise) loading.delete(realmId);
  };
  promise.then(done, done);
  loading.set(realmId, { version, promise });
  return promise;
}

export async function loadRenderData(db: Db, realmId: number): Promise<RealmRenderData> {
  const [realm, users, streams, groups, members, subgroups, linkifiers, words, customEmoji] = await Promise.all([
    db.selectFrom('realms').select(['url', 'properties']).where('id', '=', realmId).executeTakeFirst(),
    db.selectFrom('users').select(['id', 'full_name', 'delivery_email', 'is_active', 'bot_type']).where('realm_id', '=', realmId).execute(),
    db.selectFrom('streams').select(['id', 'name']).where('realm_id', '=', realmId).where('deactivated', '=', false).execute(),
    db.selectFrom('user_groups').select(['id', 'name', 'is_system_group', 'can_mention_group']).where('realm_id', '=', realmId).where('deactivated', '=', false).execute(),
    db.selectFrom('user_group_members').innerJoin('user_groups', 'user_groups.id', 'user_group_members.group_id')
      .select(['group_id', 'user_id']).where('user_groups.realm_id', '=', realmId).execute(),
    db.selectFrom('user_group_subgroups').innerJoin('user_groups', 'user_groups.id', 'user_group_subgroups.group_id')
      .select(['group_id', 'subgroup_id']).where('user_groups.realm_id', '=', realmId).execute(),
    db.selectFrom('linkifiers').select(['id', 'pattern', 'url_template']).where('realm_id', '=', realmId).orderBy('order').orderBy('id').execute(),
    db.selectFrom('alert_words').innerJoin('users', 'users.id', 'alert_words.user_id')
      .select(['alert_words.user_id', 'alert_words.word']).where('users.realm_id', '=', realmId).execute(),
    db.selectFrom('realm_emoji').select(['id', 'name', 'file_name']).where('realm_id', '=', realmId).where('deactivated', '=', false).execute(),
  ]);
  const direct = new Map<number, number[]>();
  for (const m of members) direct.set(m.group_id, [...(direct.get(m.group_id) ?? []), m.user_id]);
  const children = new Map<number, number[]>();
  for (const s of subgroups) children.set(s.group_id, [...(children.get(s.group_id) ?? []), s.subgroup_id]);
  const groupMembers = new Map<number, number[]>();
  for (const g of groups) {
    const seen = new Set<number>();
    const out = new Set<number>();
    const stack = [g.id];
    while (stack.length > 0) {
      const id = stack.pop()!;
      if (seen.has(id)) continue;
      seen.add(id);
      for (const u of direct.get(id) ?? []) out.add(u);
      stack.push(...(children.get(id) ?? []));
    }
    groupMembers.set(g.id, [...out]);
  }
  const system = {
    nobody: groups.find((g) => g.is_system_group && g.name === 'role:nobody')?.id,
    everyone: groups.find((g) => g.is_system_group && g.name === 'role:everyone')?.id,
  };
  const groupMentionRules = new Map(groups.map((g) => [g.id, {
    name: g.name,
    can_mention_group: g.can_mention_group ?? canMentionGroupId(g.is_system_group, system, g.id),
  }]));
  const alertWords = new Map<number, string[]>();
  for (const w of words) alertWords.set(w.user_id, [...(alertWords.get(w.user_id) ?? []), w.word.toLowerCase()]);
  const realmUrl = (realm?.url ?? 'http://localhost').replace(/\/$/, '');
  return {
    context: contextFromSnapshot({
      key: newSnapshotKey(),
      realmUrl,
      users: users.map((u) => ({ id: u.id, fullName: u.full_name, email: u.delivery_email, isActive: u.is_active })),
      groups: groups.map((g) => ({ id: g.id, name: g.name })),
      channels: streams.map((s) => ({ id: s.id, name: s.name })),
      linkifiers: linkifiers.map((l) => ({ id: l.id, pattern: l.pattern, urlTemplate: l.url_template })),
      customEmoji: customEmoji.map((e) => ({ id: e.id, name: e.name, sourceUrl: emojiImageUrl(realmId, e.file_name) })),
      defaultCodeBlockLanguage: defaultCodeBlockLanguage(realm?.properties),
    }),
    groupMembers,
    groupMentionRules,
    alertWords,
    outgoingWebhookBots: new Set(users.filter((u) => u.is_active && u.bot_type === OUTGOING_WEBHOOK_BOT).map((u) => u.id)),
  };
}

const OUTGOING_WEBHOOK_BOT = 3;

function defaultCodeBlockLanguage(properties: unknown): string | undefined {
  const value = (properties as Record<string, unknown> | null | undefined)?.default_code_block_language;
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/**
 * A message (new or edited) may mention a group, other than silently, only when its sender is
 * in the group named by that group's can_mention_group setting, directly or through subgroups.
 */
export function checkGroupMentionsAllowed(data: RealmRenderData, senderId: number, mentionedGroupIds: readonly number[]): void {
  for (const groupId of mentionedGroupIds) {
    const rule = data.groupMentionRules.get(groupId);
    if (!rule) continue;
    if ((data.groupMembers.get(rule.can_mention_group) ?? []).includes(senderId)) continue;
    const allowed = data.groupMentionRules.get(rule.can_mention_group)?.name ?? '';
    throw errors.badRequest(`You are not allowed to mention user group '${rule.name}'. You must be a member of '${allowed}' to mention this group.`);
  }
}

/** The realm's render context as `sender` writes: with their emoticon translation setting. */
export function senderRenderContext(context: RenderContext, sender: { settings: unknown }): RenderContext {
  const translate = (sender.settings as Record<string, unknown> | null)?.translate_emoticons === true;
  return translate ? { ...context, translateEmoticons: true } : context;
}

// The characters the real server accepts right before and right after an alert word (besides the message's
// start and end); anything else, a letter, "-", "#", "/" or "@", makes it part of a longer word.
const BEFORE_ALERT_WORD = new Set([' ', '\n', '(', '"', '.', ',', "'", ';', '[', '*', '`', '>']);
const AFTER_ALERT_WORD = new Set([' ', '\n', ')', '?', ':', '.', ',', "'", ';', ']', '!', '*', '`']);

/** Whether `word` (lower case) stands in `text` (lower case) as an alert word does. */
function hasAlertWord(text: string, word: string): boolean {
  for (let at = text.indexOf(word); at !== -1; at = text.indexOf(word, at + 1)) {
    const end = at + word.length;
    if ((at === 0 || BEFORE_ALERT_WORD.has(text[at - 1]!)) && (end === text.length || AFTER_ALERT_WORD.has(text[end]!))) return true;
  }
  return false;
}

/** Users (among `candidates`, the sender included) with an alert word in `content`, case-insensitively. */
export function alertedUsers(alertWords: Map<number, string[]>, candidates: Iterable<number>, content: string): number[] {
  if (alertWords.size === 0) return [];
  const text = content.toLowerCase();
  const out: number[] = [];
  for (const userId of candidates) {
    const words = alertWords.get(userId);
    if (!words) continue;
    if (words.some((w) => w && hasAlertWord(text, w))) out.push(userId);
  }
  return out;
}
