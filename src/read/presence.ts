import type { Db } from '../db/database.js';
import { runPrepared } from '../db/prepared.js';
import { ACTIVITY_OFFSET_SECS, PRESENCE_HISTORY_SECS } from '../domain/presence/rules.js';
import type { LastSeen } from '../domain/presence/decider.js';
import { realmHost, type RealmRow } from './realm.js';
import { apiEmail, type UserRow } from './users.js';

/** One user's presence as others are shown it (UNIX seconds). */
export interface PresenceTimes {
  user_id: number;
  email: string;
  /** null: never seen active (formatted with the date the user joined, as the real server does). */
  last_active_time: number | null;
  last_connected_time: number;
  date_joined: number;
}

const num = (v: string | number | null | undefined) => (v === null || v === undefined ? null : Number(v));
const later = (a: number | null, b: number | null) => (a === null ? b : b === null ? a : Math.max(a, b));

/** The times others see: the later of the pings table and the logged state; only the logged state once presence is off. */
function shownTimes(
  presenceEnabled: boolean,
  live: { active: number | null; connected: number | null },
  logged: { active: number | null; connected: number | null },
): { active: number | null; connected: number } | null {
  const source = presenceEnabled ? { active: later(live.active, logged.active), connected: later(live.connected, logged.connected) } : logged;
  return source.connected === null ? null : { active: source.active, connected: source.connected };
}

function presenceQuery(db: Db, realmId: number) {
  return db
    .selectFrom('users as u')
    .leftJoin('presence_last_seen as l', 'l.user_id', 'u.id')
    .leftJoin('user_presence as p', 'p.user_id', 'u.id')
    .selectAll('u')
    .select([
      'l.last_active_time as live_active',
      'l.last_connected_time as live_connected',
      'p.last_active_time as logged_active',
      'p.last_connected_time as logged_connected',
    ])
    .where('u.realm_id', '=', realmId)
    .where('u.is_active', '=', true)
    .where('u.is_bot', '=', false)
    .where((eb) => eb.or([eb('l.user_id', 'is not', null), eb('p.user_id', 'is not', null)]));
}

export type PresenceRow = Awaited<ReturnType<ReturnType<typeof presenceQuery>['execute']>>[number];

/** Last-seen times this process holds that presence_last_seen may not have yet (services/presence-tracker.ts). */
export type LocalLastSeen = (userId: number) => { last_active_time: number | null; last_connected_time: number } | undefined;

function toTimes(row: PresenceRow, host: string, local?: LocalLastSeen): PresenceTimes | null {
  const user = row as unknown as UserRow;
  const enabled = (user.settings as Record<string, unknown>).presence_enabled !== false;
  const mine = local?.(user.id);
  const shown = shownTimes(
    enabled,
    {
      active: later(num(row.live_active), mine?.last_active_time ?? null),
      connected: later(num(row.live_connected), mine?.last_connected_time ?? null),
    },
    { active: num(row.logged_active), connected: num(row.logged_connected) },
  );
  if (!shown) return null;
  return {
    user_id: user.id,
    email: apiEmail(user, host),
    last_active_time: shown.active,
    last_connected_time: shown.connected,
    date_joined: Math.floor(Date.parse(user.date_joined) / 1000),
  };
}

/** The rows behind the realm's presence: every active human with a last-seen or a logged presence. */
export function realmPresenceRows(db: Db, realmId: number): Promise<PresenceRow[]> {
  return presenceQuery(db, realmId).execute();
}

/** Every active human of the realm with presence data from the last two weeks. */
export function realmPresence(rows: readonly PresenceRow[], realm: RealmRow, now: number, local?: LocalLastSeen): PresenceTimes[] {
  const host = realmHost(realm);
  return rows.map((r) => toTimes(r, host, local)).filter((p): p is PresenceTimes => p !== null && p.last_connected_time >= now - PRESENCE_HISTORY_SECS);
}

export async function userPresence(db: Db, realm: RealmRow, userId: number, local?: LocalLastSeen): Promise<PresenceTimes | null> {
  const row = await presenceQuery(db, realm.id).where('u.id', '=', userId).executeTakeFirst();
  return row ? toTimes(row, realmHost(realm), local) : null;
}

/** The pings table row of a user. */
export async function readLastSeen(db: Db, userId: number): Promise<LastSeen | undefined> {
  const { rows } = await runPrepared(db, db
    .selectFrom('presence_last_seen')
    .select(['last_active_time', 'last_connected_time', 'logged_status'])
    .where('user_id', '=', userId));
  const r = rows[0];
  return r ? { last_active_time: num(r.last_active_time), last_connected_time: Number(r.last_connected_time), logged_status: r.logged_status } : undefined;
}

export interface LegacyPresence {
  client: 'website';
  status: 'active' | 'idle';
  timestamp: number;
  pushable: boolean;
}

/** The real server's format_legacy_presence_dict: one "website" client. */
export function legacyClientPresence(p: Pick<PresenceTimes, 'last_active_time' | 'last_connected_time' | 'date_joined'>): LegacyPresence {
  const active = p.last_active_time ?? p.date_joined;
  const isActive = active + ACTIVITY_OFFSET_SECS >= p.last_connected_time;
  return { client: 'website', status: isActive ? 'active' : 'idle', timestamp: isActive ? active : p.last_connected_time, pushable: false };
}

/** Legacy (email-keyed) entry: the "website" client and the "aggregated" copy without pushable. */
export function legacyPresence(p: PresenceTimes): Record<string, Record<string, unknown>> {
  const website = legacyClientPresence(p);
  const { pushable: _, ...aggregated } = website;
  return { website: { ...website }, aggregated };
}

/** Slim (user-id-keyed) entry. */
export function modernPresence(p: PresenceTimes): { active_timestamp: number; idle_timestamp: number } {
  return { active_timestamp: p.last_active_time ?? p.date_joined, idle_timestamp: p.last_connected_time };
}

export function presenceDictionary(rows: readonly PresenceTimes[], slim: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const p of rows) {
    if (slim) out[String(p.user_id)] = modernPresence(p);
    else out[p.email] = legacyPresence(p);
  }
  return out;
}

export const presenceDisabledInRealm = (realm: RealmRow) => (realm.properties as Record<string, unknown>).presence_disabled === true;

export interface PresenceSources {
  /** The realm's rows (a shared recent copy); read from `db` when absent. */
  rows?: (realmId: number) => Promise<readonly PresenceRow[]>;
  local?: LocalLastSeen;
}

/** GET /realm/presence, the ping response and the /register section: {} when the realm turned presence off. */
export async function presenceResponse(db: Db, realm: RealmRow, slim: boolean, nowMs: number, sources: PresenceSources = {}): Promise<{ presences: Record<string, unknown>; server_timestamp: number }> {
  if (presenceDisabledInRealm(realm)) return { presences: {}, server_timestamp: nowMs / 1000 };
  const rows = await (sources.rows ?? ((id: number) => realmPresenceRows(db, id)))(realm.id);
  const presences = presenceDictionary(realmPresence(rows, realm, Math.floor(nowMs / 1000), sources.local), slim);
  return { presences, server_timestamp: nowMs / 1000 };
}
