import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import type { RenderContext, MentionableUser, LinkableChannel } from '../markdown/index.js';
import type { ServiceContext } from './context.js';

/** What rendering and per-recipient flagging need from a realm, loaded once and reused. */
export interface RealmRenderData {
  context: RenderContext;
  /** group id → every member, subgroups included */
  groupMembers: Map<number, number[]>;
  /** user id → lower-cased alert words */
  alertWords: Map<number, string[]>;
}

interface CacheEntry {
  checkedPosition: number;
  data: RealmRenderData;
}

// Log event types that can change what the cache holds. Other areas' types are matched by name
// (linkifiers, groups, alert words) so a new event type there still invalidates the cache.
const RELEVANT_TYPES = ['UserCreated', 'UserRenamed', 'UserDeactivated', 'UserReactivated', 'UserEmailChanged', 'UserSettingsChanged',
  'StreamCreated', 'StreamPropertyChanged', 'StreamArchived', 'RealmPropertiesChanged'];

// Per database (a process may serve several, e.g. in tests), then per realm.
const caches = new WeakMap<object, { entries: Map<number, CacheEntry>; loading: Map<number, Promise<RealmRenderData>> }>();

/**
 * The render data of a realm, cached and keyed on the projection position: when the read tables
 * move on, one indexed look at the new log events says whether anything relevant changed.
 */
export async function realmRenderData(ctx: ServiceContext, realmId: number): Promise<RealmRenderData> {
  const position = ctx.projectedPosition();
  let perDb = caches.get(ctx.db);
  if (!perDb) caches.set(ctx.db, (perDb = { entries: new Map(), loading: new Map() }));
  const { entries: cache, loading } = perDb;
  const entry = cache.get(realmId);
  if (entry && entry.checkedPosition >= position) return entry.data;
  const pending = loading.get(realmId);
  if (pending) return pending;
  const promise = (async () => {
    try {
      if (entry) {
        const changed = await sql<{ one: number }>`
          SELECT 1 AS one FROM events
          WHERE position > ${entry.checkedPosition} AND position <= ${position}
            AND (type = ANY(${RELEVANT_TYPES}) OR type ILIKE '%linkifier%' OR type ILIKE '%realmfilter%'
                 OR type ILIKE '%group%' OR type ILIKE '%alertword%')
          LIMIT 1`.execute(ctx.db);
        if (changed.rows.length === 0) {
          entry.checkedPosition = Math.max(entry.checkedPosition, position);
          return entry.data;
        }
      }
      const data = await loadRenderData(ctx.db, realmId);
      cache.set(realmId, { checkedPosition: position, data });
      return data;
    } finally {
      loading.delete(realmId);
    }
  })();
  loading.set(realmId, promise);
  return promise;
}

export async function loadRenderData(db: Db, realmId: number): Promise<RealmRenderData> {
  const [realm, users, streams, groups, members, subgroups, linkifiers, words] = await Promise.all([
    db.selectFrom('realms').select('url').where('id', '=', realmId).executeTakeFirst(),
    db.selectFrom('users').select(['id', 'full_name', 'delivery_email', 'is_active']).where('realm_id', '=', realmId).execute(),
    db.selectFrom('streams').select(['id', 'name']).where('realm_id', '=', realmId).where('deactivated', '=', false).execute(),
    db.selectFrom('user_groups').select(['id', 'name']).where('realm_id', '=', realmId).where('deactivated', '=', false).execute(),
    db.selectFrom('user_group_members').innerJoin('user_groups', 'user_groups.id', 'user_group_members.group_id')
      .select(['group_id', 'user_id']).where('user_groups.realm_id', '=', realmId).execute(),
    db.selectFrom('user_group_subgroups').innerJoin('user_groups', 'user_groups.id', 'user_group_subgroups.group_id')
      .select(['group_id', 'subgroup_id']).where('user_groups.realm_id', '=', realmId).execute(),
    db.selectFrom('linkifiers').select(['id', 'pattern', 'url_template']).where('realm_id', '=', realmId).orderBy('order').orderBy('id').execute(),
    db.selectFrom('alert_words').innerJoin('users', 'users.id', 'alert_words.user_id')
      .select(['alert_words.user_id', 'alert_words.word']).where('users.realm_id', '=', realmId).execute(),
  ]);
  const byName = new Map<string, MentionableUser[]>();
  const byId = new Map<number, MentionableUser>();
  for (const u of users) {
    const m: MentionableUser = { id: u.id, fullName: u.full_name, email: u.delivery_email, isActive: u.is_active };
    byId.set(u.id, m);
    const key = u.full_name.toLowerCase();
    byName.set(key, [...(byName.get(key) ?? []), m]);
  }
  const channels = new Map<string, LinkableChannel>();
  for (const s of streams) channels.set(s.name.toLowerCase(), { id: s.id, name: s.name });
  const groupByName = new Map(groups.map((g) => [g.name.toLowerCase(), { id: g.id, name: g.name }]));
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
  const alertWords = new Map<number, string[]>();
  for (const w of words) alertWords.set(w.user_id, [...(alertWords.get(w.user_id) ?? []), w.word.toLowerCase()]);
  const realmUrl = (realm?.url ?? 'http://localhost').replace(/\/$/, '');
  return {
    context: {
      realmUrl,
      userByName: (name) => byName.get(name.toLowerCase()) ?? [],
      userById: (id) => byId.get(id),
      groupByName: (name) => groupByName.get(name.toLowerCase()),
      channelByName: (name) => channels.get(name.toLowerCase()),
      linkifiers: linkifiers.map((l) => ({ id: l.id, pattern: l.pattern, urlTemplate: l.url_template })),
      customEmojiByName: () => undefined,
    },
    groupMembers,
    alertWords,
  };
}

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Users (among `candidates`) with an alert word in `content`: case-insensitive, on word boundaries. */
export function alertedUsers(alertWords: Map<number, string[]>, candidates: Iterable<number>, content: string): number[] {
  if (alertWords.size === 0) return [];
  const text = content.toLowerCase();
  const out: number[] = [];
  for (const userId of candidates) {
    const words = alertWords.get(userId);
    if (!words) continue;
    if (words.some((w) => w && new RegExp(`(^|[^\\p{L}\\p{N}_])${escapeRegExp(w)}($|[^\\p{L}\\p{N}_])`, 'u').test(text))) out.push(userId);
  }
  return out;
}
