import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../db/database.js';
import { runPrepared } from '../db/prepared.js';
import { ApiError } from '../domain/errors.js';
import { FlagBit } from '../domain/messages/flags.js';
import { Role } from '../domain/roles.js';
import {
  canAccessMessage,
  canModifyMessage,
  canReadStreamContent,
  isSpectator,
  streamHistoryIsProtected,
  webPublicStreamIdsSql,
  type StreamRow,
  type Viewer,
} from '../visibility.js';
import { errors } from '../domain/errors.js';
import { getUserByEmailFor } from './users.js';
import { canonicalStreamName } from '../domain/channels/decider.js';

export interface NarrowTerm {
  operator: string;
  operand: unknown;
  negated: boolean;
}

export const badNarrow = (msg: string) => new ApiError('BAD_NARROW', 400, msg);
const badOperator = (what: string) => badNarrow(`Invalid narrow operator: ${what}`);
/** A narrow parameter that does not have the parameter's shape (the real server's wording and code). */
const badParameter = (msg: string) => new ApiError('BAD_REQUEST', 400, msg);
const badTerm = (index: number, what: string) => badParameter(`Invalid narrow[${index}]: Value error, ${what}`);

const ALIASES: Record<string, string> = {
  stream: 'channel',
  streams: 'channels',
  subject: 'topic',
  'pm-with': 'dm',
  'dm-with': 'dm-including',
  // Older servers also took these two with underscores, and clients still send them.
  pm_with: 'dm',
  group_pm_with: 'group-pm-with',
};
const OPERATORS = new Set(['channel', 'channels', 'topic', 'sender', 'dm', 'dm-including', 'group-pm-with', 'is', 'has', 'search', 'id', 'near', 'with', 'in']);
/** Operators whose operand may be an id as well as a string (a name or an email). */
const ID_OPERATORS = new Set(['channel', 'id', 'sender', 'group-pm-with', 'dm-including', 'with']);

/**
 * Accepts `{operator, operand, negated?}` objects and `[operator, operand]` string pairs. A term of
 * another shape, or an operand of the wrong type for its operator, is BAD_REQUEST in the real server's
 * words; an unknown operator is BAD_NARROW.
 */
export function parseNarrow(raw: unknown): NarrowTerm[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) throw badParameter('narrow is not a list');
  return raw.map((term, index) => parseTerm(term, index));
}

function parseTerm(term: unknown, index: number): NarrowTerm {
  let operator: unknown;
  let operand: unknown;
  let negated: unknown = false;
  if (Array.isArray(term)) {
    if (term.length !== 2 || term.some((x) => typeof x !== 'string')) throw badTerm(index, 'element is not a string pair');
    [operator, operand] = term;
  } else if (term !== null && typeof term === 'object') {
    const t = term as Record<string, unknown>;
    if (t.operand === undefined || t.operand === null) throw badTerm(index, 'operand is missing');
    if (t.operator === undefined || t.operator === null) throw badTerm(index, 'operator is missing');
    ({ operator, operand } = t);
    negated = t.negated ?? false;
  } else throw badTerm(index, 'dict or list required');
  if (typeof operator !== 'string') throw badTerm(index, 'operator is not a string');
  const op = ALIASES[operator] ?? operator;
  const problem = operandProblem(op, operand);
  if (problem) throw badTerm(index, problem);
  if (typeof negated !== 'boolean') throw badTerm(index, 'negated is not a boolean');
  if (!OPERATORS.has(op)) throw badOperator(`unknown operator ${operator}`);
  return { operator: op, operand, negated };
}

/** What is wrong with the operand's type for this operator, if anything. */
function operandProblem(operator: string, operand: unknown): string | undefined {
  const isInt = (x: unknown) => typeof x === 'number' && Number.isInteger(x);
  if (ID_OPERATORS.has(operator)) return typeof operand === 'string' || isInt(operand) ? undefined : 'operand is not a string or integer';
  if (operator === 'dm') {
    if (typeof operand === 'string') return undefined;
    if (!Array.isArray(operand)) return 'operand is not a string or integer list';
    const bad = operand.findIndex((x) => !isInt(x));
    return bad < 0 ? undefined : `operand[${bad}] is not an integer`;
  }
  if (typeof operand !== 'string') return 'operand is not a string';
  if (operator === 'search' && operand.trim() === '') return 'operand cannot be blank.';
  return undefined;
}

/**
 * Operators a spectator's narrow may use (the real server's is_spectator_compatible): none of them
 * reads a user's own state of messages, and none names direct messages.
 */
const SPECTATOR_OPERATORS = new Set(['channel', 'channels', 'topic', 'sender', 'has', 'search', 'near', 'id', 'with']);

/**
 * A spectator's narrow as the real server's get_messages_backend takes it: a positive `in:home` is
 * dropped (spectators mute nothing), and what is left must contain a positive `channels:web-public`
 * and only operators a spectator may use. Anything else is not a web-public query but a client that
 * lost its credentials, and gets the 401 that asks for them.
 */
export function narrowForSpectator(terms: NarrowTerm[]): NarrowTerm[] {
  const kept = terms.filter((t) => !(t.operator === 'in' && t.operand === 'home' && !t.negated));
  const webPublic = kept.some((t) => t.operator === 'channels' && t.operand === 'web-public' && !t.negated);
  if (!webPublic || !kept.every((t) => SPECTATOR_OPERATORS.has(t.operator))) throw errors.notLoggedInSession();
  return kept;
}

export interface NarrowQuery {
  /** SQL conditions over `m` (messages), all of which must hold. */
  conditions: RawBuilder<unknown>[];
  /** Words to highlight for `search` terms. */
  searchTerms: string[];
  /** The one channel a positive channel term names, if any. */
  stream: StreamRow | undefined;
}

export interface NarrowViewer extends Viewer {
  /** read watermark of the viewer (message_read_state) */
  readThrough: number;
}

/** A viewer whose read watermark may not have been read yet: only unread narrows need it. */
export type ReadingViewer = Viewer & { readThrough?: number };

export async function readThroughOf(db: Db, userId: number): Promise<number> {
  const { rows } = await runPrepared(db, db.selectFrom('message_read_state').select('read_through').where('user_id', '=', userId));
  return rows[0]?.read_through ?? 0;
}

/** The viewer with their read watermark, read now if it was not known. */
export async function withReadThrough(db: Db, viewer: ReadingViewer): Promise<NarrowViewer> {
  const { user_id, role, realm_id } = viewer;
  return { user_id, role, realm_id, readThrough: viewer.readThrough ?? await readThroughOf(db, user_id) };
}

/**
 * The viewer received the message (subscription span, DM participant, or sender). For a channel
 * message moved between channels, a message_moved_receptions row overrides the span answer and
 * the sender's (a sender not subscribed to the channel it was moved into has lost it). `userId`: an
 * id, or a column holding one (a look-up for several users at once).
 */
export function receivedSql(userId: number | RawBuilder<unknown> | ReturnType<typeof sql.ref>): RawBuilder<unknown> {
  return sql`((m.dm_key IS NOT NULL AND (m.sender_id = ${userId}
      OR EXISTS (SELECT 1 FROM message_dm_recipients d WHERE d.user_id = ${userId} AND d.message_id = m.id)))
    OR (m.stream_id IS NOT NULL AND COALESCE(
      (SELECT mr.received FROM message_moved_receptions mr WHERE mr.user_id = ${userId} AND mr.message_id = m.id),
      m.sender_id = ${userId} OR EXISTS (SELECT 1 FROM message_reception_spans s WHERE s.user_id = ${userId}
        AND s.stream_id = m.stream_id AND s.from_id <= m.id AND (s.to_id IS NULL OR s.to_id >= m.id)))))`;
}

const flagsSql = (userId: number) => sql`COALESCE((SELECT f.flags FROM message_flags f WHERE f.user_id = ${userId} AND f.message_id = m.id), 0)`;

export function unreadSql(viewer: NarrowViewer): RawBuilder<unknown> {
  const flags = flagsSql(viewer.user_id);
  // Nothing at or below this id can be unread: the watermark, or the oldest message marked unread.
  // An uncorrelated subquery runs once, and the range lets the scan start there instead of at id 0.
  const floor = sql`LEAST(${viewer.readThrough}::int8, COALESCE((SELECT min(fu.message_id) - 1 FROM message_flags fu
    WHERE fu.user_id = ${viewer.user_id} AND fu.flags & ${FlagBit.UNREAD} <> 0), ${viewer.readThrough}::int8))`;
  // A message marked unread is unread whether or not it was received (the real server's
  // "historical" row without the read flag): only the others need the reception test.
  return sql`(m.id > ${floor}
    AND (${flags} & ${FlagBit.UNREAD} <> 0 OR (${flags} & ${FlagBit.READ} = 0 AND m.id > ${viewer.readThrough} AND ${receivedSql(viewer.user_id)})))`;
}

/** Topic visibility policy of the viewer for the message's conversation (0 when none). */
const policySql = (userId: number) =>
  sql`COALESCE((SELECT ut.visibility_policy FROM user_topics ut WHERE ut.user_id = ${userId} AND ut.stream_id = m.stream_id AND lower(ut.topic) = lower(m.topic)), 0)`;

/** In a topic the viewer muted. */
export function topicMutedSql(userId: number): RawBuilder<unknown> {
  return sql`(m.stream_id IS NOT NULL AND ${policySql(userId)} = 1)`;
}

/** In a muted topic, or a muted channel without an unmuted or followed topic policy. */
export function mutedSql(userId: number): RawBuilder<unknown> {
  const policy = policySql(userId);
  return sql`(m.stream_id IS NOT NULL AND (${policy} = 1 OR (${policy} NOT IN (2, 3) AND EXISTS (
    SELECT 1 FROM subscriptions sub WHERE sub.user_id = ${userId} AND sub.stream_id = m.stream_id AND sub.active AND sub.is_muted))))`;
}

/** The read tables a channel look-up (findStream) comes from: its cache holds while they do not change. */
export const CHANNEL_LOOKUP_TABLES = ['streams', 'subscriptions'];
type ChannelLookup = { stream: StreamRow; subscribed: boolean } | undefined;
const CHANNEL_LOOKUPS_KEPT = 10_000;
/** Per database, the look-ups made at one tables version (CHANNEL_LOOKUP_TABLES), by viewer and operand. */
const channelLookups = new WeakMap<object, { version: number; lookups: Map<string, ChannelLookup> }>();

/**
 * The channel an operand names, with whether the viewer is subscribed to it (one query), or from
 * the look-ups made while `version` (tablesVersion of CHANNEL_LOOKUP_TABLES, taken before the
 * read) is current: every channel-narrowed read starts with it, and a history read made three
 * statements.
 */
async function findStream(db: Db, viewer: Viewer, operand: unknown, version?: number): Promise<ChannelLookup> {
  if (version === undefined) return lookUpStream(db, viewer, operand);
  let cache = channelLookups.get(db);
  if (!cache || cache.version !== version || cache.lookups.size >= CHANNEL_LOOKUPS_KEPT) channelLookups.set(db, (cache = { version, lookups: new Map() }));
  const key = `${viewer.user_id}:${viewer.realm_id}:${typeof operand}:${String(operand)}`;
  if (cache.lookups.has(key)) return cache.lookups.get(key);
  const found = await lookUpStream(db, viewer, operand);
  // Kept only if no newer version replaced this one while the look-up was out.
  if (channelLookups.get(db) === cache) cache.lookups.set(key, found && Object.freeze(found));
  return found;
}

async function lookUpStream(db: Db, viewer: Viewer, operand: unknown): Promise<ChannelLookup> {
  // A lookup by key, prepared. A template, not the query builder: building that query cost more than running it.
  const lookup = async (where: RawBuilder<unknown>) => {
    const row = (await runPrepared(db, sql<StreamRow & { viewer_subscribed: boolean }>`SELECT st.*, EXISTS (SELECT 1 FROM subscriptions sub
      WHERE sub.user_id = ${viewer.user_id} AND sub.stream_id = st.id AND sub.active) AS viewer_subscribed
      FROM streams st WHERE st.realm_id = ${viewer.realm_id} AND ${where}`)).rows[0];
    if (!row) return undefined;
    const { viewer_subscribed: subscribed, ...stream } = row;
    return { stream, subscribed: subscribed === true };
  };
  if (typeof operand === 'number' || (typeof operand === 'string' && /^\d+$/.test(operand))) {
    if (!isDbInt(Number(operand))) return undefined;
    const byId = await lookup(sql`st.id = ${Number(operand)}`);
    if (byId || typeof operand === 'number') return byId;
  }
  if (typeof operand !== 'string') return undefined;
  return lookup(sql`lower(st.name) = ${canonicalStreamName(operand).toLowerCase()} ORDER BY st.deactivated LIMIT 1`);
}

async function findUserId(db: Db, viewer: Viewer, realmHost: string, operand: unknown): Promise<number | undefined> {
  if (typeof operand === 'number' || (typeof operand === 'string' && /^\d+$/.test(operand))) {
    if (!isDbInt(Number(operand))) return undefined;
    const user = await db.selectFrom('users').select(['id', 'realm_id']).where('id', '=', Number(operand)).executeTakeFirst();
    return user && user.realm_id === viewer.realm_id ? user.id : undefined;
  }
  if (typeof operand !== 'string') return undefined;
  return (await getUserByEmailFor(db, viewer, operand.trim(), realmHost))?.id;
}

async function userIdList(db: Db, viewer: Viewer, realmHost: string, operand: unknown): Promise<number[]> {
  const items = Array.isArray(operand) ? operand : typeof operand === 'number' ? [operand] : String(operand).split(',').map((s) => s.trim());
  // The real server names the whole operand (a list as Python prints it).
  const unknown = () => badOperator(`unknown user in ${Array.isArray(operand) ? `[${operand.join(', ')}]` : String(operand)}`);
  // An empty list names nobody else: the viewer's conversation with themself.
  if (Array.isArray(operand) && operand.length === 0) return [];
  if (items.length === 0) throw unknown();
  const ids: number[] = [];
  for (const item of items) {
    const id = await findUserId(db, viewer, realmHost, item);
    if (id === undefined) throw unknown();
    ids.push(id);
  }
  return ids;
}

const MAX_INT = 2_147_483_647;
/** Ids beyond the integer column range match nothing (and must not reach PostgreSQL). */
const isDbInt = (n: number) => Number.isInteger(n) && n >= 0 && n <= MAX_INT;

const dmKey = (ids: number[]) => [...new Set(ids)].sort((a, b) => a - b).join(',');

const DM_OPERATORS = ['dm', 'dm-including', 'group-pm-with'];
const isDmTerm = (t: NarrowTerm) => t.operator === 'is' && (t.operand === 'dm' || t.operand === 'private');

/** A positive channel, channels or topic term, or a negated is:dm: only channel messages can match. */
function isChannelNarrow(terms: NarrowTerm[]): boolean {
  return terms.some((t) => (!t.negated && ['channel', 'channels', 'topic'].includes(t.operator)) || (t.negated && isDmTerm(t)));
}

/** A positive dm, dm-including, group-pm-with or is:dm term: only direct messages can match. */
function isDmNarrow(terms: NarrowTerm[]): boolean {
  return terms.some((t) => !t.negated && (DM_OPERATORS.includes(t.operator) || isDmTerm(t)));
}

/**
 * Turns a parsed narrow into SQL conditions for `viewer`, including who may see what: a channel term
 * the viewer may read the history of reads that channel, channels:public reads every public channel
 * (not for guests); anything else, and any term on the viewer's own state of messages (is:unread,
 * is:starred, ...), reads only the viewer's own message history, what they received.
 */
export async function buildNarrow(db: Db, viewer: ReadingViewer, realmHost: string, input: NarrowTerm[], channelsVersion?: number): Promise<NarrowQuery> {
  let terms = input;
  // `with`: the conversation of that message replaces channel/topic/dm terms, if it is visible.
  // Without it, the rest of the narrow must name a conversation itself (a dm term, or a channel and a topic).
  const withTerms = terms.filter((t) => t.operator === 'with');
  if (withTerms.length > 1) throw badNarrow("Invalid narrow operator combination: Duplicate 'with' operators.");
  const withTerm = withTerms[0];
  if (withTerm) {
    const id = Number(withTerm.operand);
    if (!isDbInt(id) || (typeof withTerm.operand === 'string' && !/^\d+$/.test(withTerm.operand))) throw badOperator("Invalid 'with' operator");
    const target = await db.selectFrom('messages').selectAll().where('id', '=', id).executeTakeFirst();
    const visible = target ? await messageAccessibleTo(db, viewer, target) : false;
    terms = terms.filter((t) => t.operator !== 'with');
    const namesConversation = terms.some((t) => t.operator === 'dm')
      || (terms.some((t) => t.operator === 'channel') && terms.some((t) => t.operator === 'topic'));
    if (!visible && !namesConversation) throw badOperator("Invalid 'with' operator");
    if (target && visible) {
      terms = terms.filter((t) => !['channel', 'topic', 'dm', 'dm-including', 'group-pm-with'].includes(t.operator) || t.negated);
      if (target.stream_id !== null) {
        terms.push({ operator: 'channel', operand: target.stream_id, negated: false });
        terms.push({ operator: 'topic', operand: target.topic, negated: false });
      } else {
        const ids = (target.dm_key ?? '').split(',').map(Number).filter((x) => x !== viewer.user_id);
        terms.push({ operator: 'dm', operand: ids.length > 0 ? ids : [viewer.user_id], negated: false });
      }
    }
  }

  const conditions: RawBuilder<unknown>[] = [sql`m.realm_id = ${viewer.realm_id}`];
  const searchTerms: string[] = [];
  const searchTexts: string[] = [];
  let stream: StreamRow | undefined;
  // Whether the narrow reads a whole history (a channel's, or every public channel's) rather than the
  // viewer's own: set by positive channel and channels:public terms, as the real server decides it.
  let wholeHistory: boolean | undefined;
  const allowHistory = (allowed: boolean) => { wholeHistory = (wholeHistory ?? true) && allowed; };
  if (isChannelNarrow(terms) && isDmNarrow(terms)) throw badOperator('No message can be both a channel message and direct message');

  const spectator = isSpectator(viewer);
  for (const term of terms) {
    let cond: RawBuilder<unknown>;
    const operand = term.operand;
    // narrowForSpectator has refused these already; a spectator's query never reaches a user's own state.
    if (spectator && !SPECTATOR_OPERATORS.has(term.operator)) throw errors.notLoggedInSession();
    switch (term.operator) {
      case 'channel': {
        const lookup = await findStream(db, viewer, operand, channelsVersion);
        if (!lookup) throw badOperator(`unknown channel ${String(operand)}`);
        const { stream: found, subscribed } = lookup;
        // As the real server: a spectator names web-public channels only, even in a negated term.
        if (spectator && !found.is_web_public) throw badOperator(`unknown web-public channel ${String(operand)}`);
        if (!term.negated) {
          stream = found;
          // Without full access to the channel's history, only what the viewer received.
          allowHistory(canReadStreamContent(viewer, found, subscribed) && !streamHistoryIsProtected(found));
        }
        cond = sql`m.stream_id = ${found.id}`;
        break;
      }
      case 'channels': {
        if (operand !== 'public' && operand !== 'web-public') throw badOperator(`invalid channels operand ${String(operand)}`);
        // web-public: the channels a spectator may read (get_web_public_streams_queryset), for anyone who asks.
        cond = operand === 'public'
          ? sql`m.stream_id IN (SELECT st.id FROM streams st WHERE st.realm_id = ${viewer.realm_id} AND NOT st.invite_only)`
          : sql`m.stream_id IN ${webPublicStreamIdsSql(viewer.realm_id)}`;
        // Every public channel's history, for members; guests (and channels:web-public) read their own history.
        if (!term.negated && operand === 'public') allowHistory(viewer.role !== Role.GUEST);
        break;
      }
      case 'topic':
        if (typeof operand !== 'string') throw badOperator('invalid topic');
        // Direct messages have no topic, not an empty one.
        cond = sql`(m.stream_id IS NOT NULL AND lower(m.topic) = ${operand.toLowerCase()})`;
        break;
      case 'sender': {
        const id = await findUserId(db, viewer, realmHost, operand);
        if (id === undefined) throw badOperator(`unknown user ${String(operand)}`);
        cond = sql`m.sender_id = ${id}`;
        break;
      }
      case 'dm': {
        const ids = await userIdList(db, viewer, realmHost, operand);
        cond = sql`m.dm_key = ${dmKey([...ids, viewer.user_id])}`;
        break;
      }
      case 'dm-including': {
        const id = await findUserId(db, viewer, realmHost, operand);
        if (id === undefined) throw badOperator(`unknown user ${String(operand)}`);
        cond = sql`(m.dm_key IS NOT NULL AND EXISTS (SELECT 1 FROM message_dm_recipients d2 WHERE d2.user_id = ${id} AND d2.message_id = m.id))`;
        break;
      }
      case 'group-pm-with': {
        const id = await findUserId(db, viewer, realmHost, operand);
        if (id === undefined) throw badOperator(`unknown user ${String(operand)}`);
        cond = sql`(m.dm_key LIKE '%,%,%' AND EXISTS (SELECT 1 FROM message_dm_recipients d2 WHERE d2.user_id = ${id} AND d2.message_id = m.id))`;
        break;
      }
      case 'is': {
        const flags = flagsSql(viewer.user_id);
        switch (operand) {
          case 'dm':
          case 'private':
            cond = sql`m.stream_id IS NULL`;
            break;
          case 'starred':
            cond = sql`(${flags} & ${FlagBit.STARRED} <> 0)`;
            break;
          case 'mentioned':
            cond = sql`((${flags} & ${FlagBit.MENTIONED | FlagBit.TOPIC_WILDCARD} <> 0) OR (m.stream_wildcard AND ${receivedSql(viewer.user_id)}))`;
            break;
          case 'alerted':
            cond = sql`(${flags} & ${FlagBit.HAS_ALERT_WORD} <> 0)`;
            break;
          case 'unread':
            cond = unreadSql(await withReadThrough(db, viewer));
            break;
          case 'resolved':
            cond = sql`m.topic LIKE '✔ %'`;
            break;
          case 'followed':
            cond = sql`(m.stream_id IS NOT NULL AND ${policySql(viewer.user_id)} = 3)`;
            break;
          case 'muted':
            cond = mutedSql(viewer.user_id);
            break;
          default:
            throw badOperator(`unknown 'is' operand ${String(operand)}`);
        }
        break;
      }
      case 'in':
        if (operand === 'all') continue;
        if (operand !== 'home') throw badOperator(`unknown 'in' operand ${String(operand)}`);
        cond = sql`NOT ${mutedSql(viewer.user_id)}`;
        break;
      case 'has':
        switch (operand) {
          case 'link': cond = sql`m.has_link`; break;
          case 'image': cond = sql`m.has_image`; break;
          case 'attachment': cond = sql`m.has_attachment`; break;
          case 'reaction': cond = sql`EXISTS (SELECT 1 FROM reactions r WHERE r.message_id = m.id)`; break;
          default: throw badOperator(`unknown 'has' operand ${String(operand)}`);
        }
        break;
      case 'search': {
        if (typeof operand !== 'string') throw badOperator('invalid search');
        // Positive search terms are searched as one text, after the loop, as the real server does.
        if (!term.negated) {
          searchTexts.push(operand);
          continue;
        }
        cond = searchSql(operand);
        break;
      }
      case 'id': {
        const id = Number(operand);
        if (!isDbInt(id) || (typeof operand === 'string' && !/^\d+$/.test(operand))) throw badOperator('Invalid message ID');
        cond = sql`m.id = ${id}`;
        break;
      }
      case 'near':
        continue;
      default:
        throw badOperator(`unknown operator ${term.operator}`);
    }
    conditions.push(term.negated ? sql`NOT ${cond}` : cond);
  }

  if (searchTexts.length > 0) {
    const text = searchTexts.join(' ');
    searchTerms.push(...text.replace(/"/g, ' ').split(/\s+/).filter(Boolean));
    conditions.push(searchSql(text));
  }
  // A term on the viewer's own state of messages (is:starred, is:unread, ...) can only match what they
  // received; is:resolved is a property of the topic.
  if (terms.some((t) => t.operator === 'is' && t.operand !== 'resolved')) wholeHistory = false;
  // The user's history, as the real server's UserMessage rows: what they received, and the
  // messages they gave flags to without receiving them (its "historical" rows).
  // A spectator has no history of their own: they read the web-public channels' whole histories,
  // and nothing else whatever the narrow said (the real server's web-public query).
  if (spectator) conditions.push(sql`m.stream_id IN ${webPublicStreamIdsSql(viewer.realm_id)}`);
  else if (!wholeHistory) conditions.push(sql`(${receivedSql(viewer.user_id)} OR EXISTS (SELECT 1 FROM message_flags hf WHERE hf.user_id = ${viewer.user_id} AND hf.message_id = m.id))`);
  return { conditions, searchTerms, stream };
}

/**
 * A full-text search: every word (stemmed, stop words dropped; a URL stays one word), and each "quoted
 * phrase" as written in the content or a channel message's topic.
 */
function searchSql(text: string): RawBuilder<unknown> {
  const phrases = [...text.matchAll(/"([^"]+)"/g)].map((m) => `%${m[1]!.replace(/[\\%_]/g, (c) => `\\${c}`)}%`);
  const phraseConditions = phrases.map((p) => sql`(m.content ILIKE ${p} OR (m.stream_id IS NOT NULL AND m.topic ILIKE ${p}))`);
  return sql`(${sql.join([sql`m.search_tsv @@ plainto_tsquery('english', ${text})`, ...phraseConditions], sql` AND `)})`;
}

/** What canAccessMessage needs to know about one message for one viewer (messageAccessSql gathers it). */
export interface MessageAccess {
  /** The message's channel; null for a direct message. */
  stream: StreamRow | null;
  /** The viewer is subscribed to the channel now. */
  subscribed: boolean;
  /** A moved message's reception row for the viewer: it beats the span answer and "sent it". */
  moved: boolean | null;
  /** A reception span of the viewer covers the message: subscribed when it was sent. */
  spanned: boolean;
}

/**
 * The lookups of messageAccessibleTo as one JSON value over a message row `m` (its id and stream_id),
 * to fold into the statement that reads the message: a vote or a reaction checks visibility first,
 * and one statement costs the database far less than a statement per fact. `viewerId` may be a
 * column of the statement (several viewers' look-ups in one).
 */
export function messageAccessSql(viewerId: number | RawBuilder<number>): RawBuilder<MessageAccess> {
  return sql<MessageAccess>`json_build_object(
    'stream', (SELECT to_jsonb(st) FROM streams st WHERE st.id = m.stream_id),
    'subscribed', EXISTS (SELECT 1 FROM subscriptions s WHERE s.user_id = ${viewerId} AND s.stream_id = m.stream_id AND s.active),
    'moved', (SELECT r.received FROM message_moved_receptions r WHERE r.user_id = ${viewerId} AND r.message_id = m.id),
    'spanned', EXISTS (SELECT 1 FROM message_reception_spans sp WHERE sp.user_id = ${viewerId} AND sp.stream_id = m.stream_id
      AND sp.from_id <= m.id AND (sp.to_id IS NULL OR sp.to_id >= m.id)))`;
}

/** Did the viewer receive the channel message (or send it), given messageAccessSql's facts? */
function receivedWith(viewer: Viewer, message: { stream_id: number | null; sender_id: number }, access: MessageAccess): boolean {
  const channel = message.stream_id !== null;
  return channel && access.moved !== null ? access.moved : message.sender_id === viewer.user_id || (channel && access.spanned);
}

/** May the viewer reach the message by its id (canAccessMessage), given the facts messageAccessSql gathered? */
export function messageAccessibleWith(
  viewer: Viewer,
  message: { realm_id: number; stream_id: number | null; sender_id: number; dm_key: string | null },
  access: MessageAccess,
): boolean {
  const participants = message.dm_key ? message.dm_key.split(',').map(Number) : [];
  const channel = message.stream_id !== null;
  return canAccessMessage(viewer, message, {
    stream: channel ? access.stream ?? undefined : undefined,
    subscribed: channel && access.subscribed,
    received: receivedWith(viewer, message, access),
    dmParticipant: participants.includes(viewer.user_id),
  });
}

/** Facts about one message for a viewer (one statement), and whether the viewer may read it and act on it. */
async function messageAccessFor(
  db: Db,
  viewer: Viewer,
  message: { id: number; stream_id: number },
): Promise<MessageAccess> {
  const { rows } = await sql<{ access: MessageAccess }>`SELECT ${messageAccessSql(viewer.user_id)} AS access
    FROM (VALUES (${message.id}::int, ${message.stream_id}::int)) AS m(id, stream_id)`.execute(db);
  return rows[0]!.access;
}

/** May the viewer act on the message (react to it): see canModifyMessage. */
export async function messageModifiableBy(
  db: Db,
  viewer: Viewer,
  message: { id: number; realm_id: number; stream_id: number | null; sender_id: number; dm_key: string | null },
): Promise<boolean> {
  const participants = message.dm_key ? message.dm_key.split(',').map(Number) : [];
  if (message.stream_id === null) return canModifyMessage(viewer, message, { subscribed: false, received: false, dmParticipant: participants.includes(viewer.user_id) });
  const access = await messageAccessFor(db, viewer, { id: message.id, stream_id: message.stream_id });
  return canModifyMessage(viewer, message, { stream: access.stream ?? undefined, subscribed: access.subscribed, received: receivedWith(viewer, message, access), dmParticipant: false });
}

/** Whether the viewer may reach one message by its id (canAccessMessage), with the lookups it needs (one statement). */
export async function messageAccessibleTo(
  db: Db,
  viewer: Viewer,
  message: { id: number; realm_id: number; stream_id: number | null; sender_id: number; dm_key: string | null },
): Promise<boolean> {
  if (message.realm_id !== viewer.realm_id) return false;
  if (message.stream_id === null) return messageAccessibleWith(viewer, message, { stream: null, subscribed: false, moved: null, spanned: false });
  return messageAccessibleWith(viewer, message, await messageAccessFor(db, viewer, { id: message.id, stream_id: message.stream_id }));
}
