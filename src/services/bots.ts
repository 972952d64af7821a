import { errors } from '../domain/errors.js';
import { Role, isAdminRole } from '../domain/roles.js';
import { validateFullName } from '../domain/users/decider.js';
import type { BotDefaultChanged } from '../domain/users/events.js';
import { getActiveStreamByName } from '../read/channels.js';
import { botDomain, type RealmRow } from '../read/realm.js';
import { activeUserNamed, getUserByEmail, type UserRow } from '../read/users.js';
import { realmHost } from '../read/realm.js';
import { canJoinStream, isSubscribed } from '../visibility.js';
import type { RequestMeta, ServiceContext } from './context.js';
import { actorOf, createUser, userStream } from './users.js';
import { generateApiKey } from './secrets.js';
import { getBotService } from '../read/bot-services.js';
import type { UserCommand } from '../domain/users/decider.js';

export const BotType = { GENERIC: 1, INCOMING_WEBHOOK: 2, OUTGOING_WEBHOOK: 3, EMBEDDED: 4 } as const;

/** bot_creation_policy values: 1 everyone, 2 everyone but generic bots for administrators only, 3 administrators. */
const BOT_CREATION_EVERYONE = 1;
const BOT_CREATION_LIMIT_GENERIC_BOTS = 2;
const BOT_CREATION_ADMINS_ONLY = 3;

/** Outgoing webhook interfaces: 1 generic (Zulip's format), 2 Slack-compatible. */
export const INTERFACE_TYPES: readonly number[] = [1, 2];

export interface NewBot {
  full_name: string;
  short_name: string;
  bot_type?: number;
  service_name?: string;
  payload_url?: unknown;
  interface_type?: number;
  config_data?: unknown;
  default_sending_stream?: string;
  default_events_register_stream?: string;
  default_all_public_streams?: boolean;
  /** How many files the request carried (one at most: the avatar). */
  file_count: number;
}

/** The bot types a user may create under the organization's policy (embedded bots are not enabled here). */
function allowedBotTypes(user: UserRow, policy: number): number[] {
  const types: number[] = [];
  if (isAdminRole(user.role) || policy !== BOT_CREATION_LIMIT_GENERIC_BOTS) types.push(BotType.GENERIC);
  return [...types, BotType.INCOMING_WEBHOOK, BotType.OUTGOING_WEBHOOK];
}

function checkCreationPolicy(user: UserRow, policy: number, botType: number): void {
  if (isAdminRole(user.role) || policy === BOT_CREATION_EVERYONE) return;
  if (policy === BOT_CREATION_ADMINS_ONLY) throw errors.mustBeAdmin();
  if (policy === BOT_CREATION_LIMIT_GENERIC_BOTS && botType === BotType.GENERIC) throw errors.mustBeAdmin();
}

export function isHttpUrl(value: string): boolean {
  // The host as written: WHATWG parsing would quietly complete an address like "127.0.0.".
  const host = /^https?:\/\/(?:[^@/?#]*@)?(\[[^\]]*\]|[^/:?#]*)/i.exec(value)?.[1] ?? '';
  if (host === '' || host.startsWith('.') || host.includes('..') || /^[\d.]+\.$/.test(host)) return false;
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

/** A channel the owner may use as a bot's default, by name, as the real server's access by name. */
export async function botDefaultChannel(ctx: ServiceContext, user: UserRow, name: string): Promise<number | null> {
  if (name === '') return null;
  const stream = await getActiveStreamByName(ctx.db, user.realm_id, name);
  const viewer = { user_id: user.id, role: user.role, realm_id: user.realm_id };
  if (!stream || !canJoinStream(viewer, stream, await isSubscribed(ctx.db, user.id, stream.id))) {
    throw errors.badRequest(`Invalid channel name '${name}'`);
  }
  return stream.id;
}

/**
 * POST /bots: every check in the real server's order, then the bot and its default channels in
 * one command. Returns the new bot's id, key and channel ids (the route formats the answer).
 */
export async function createBot(
  ctx: ServiceContext,
  meta: RequestMeta,
  user: UserRow,
  realm: RealmRow,
  bot: NewBot,
): Promise<{ user_id: number; api_key: string; default_sending_stream_id: number | null; default_events_register_stream_id: number | null }> {
  if (user.role === Role.GUEST) throw errors.badRequest('Not allowed for guest users');
  if (bot.payload_url !== undefined && (typeof bot.payload_url !== 'string' || (bot.payload_url !== '' && !isHttpUrl(bot.payload_url)))) {
    throw errors.badRequest('payload_url is not a URL');
  }
  if (bot.config_data !== undefined && Object.values(bot.config_data as Record<string, unknown>).some((v) => typeof v !== 'string')) {
    throw errors.badRequest('config_data contains a value that is not a string');
  }
  const shortName = bot.short_name.trim();
  if (shortName === '') throw errors.badRequest('Bad name or username');
  const fullName = validateFullName(bot.full_name);
  const short = shortName.toLowerCase();
  if (!/^[a-z0-9._-]+$/.test(short)) throw errors.badRequest('Bad name or username');
  const botType = bot.bot_type ?? BotType.GENERIC;
  if (botType === BotType.EMBEDDED) throw errors.badRequest('Embedded bots are not enabled.');
  const email = `${short}-bot@${botDomain(realm)}`;
  if (await getUserByEmail(ctx.db, realm.id, email, realmHost(realm))) throw errors.badRequest('Username already in use');
  // A bot's name is unique among active users whatever the organization's rule for humans.
  if (await activeUserNamed(ctx.db, realm.id, fullName)) throw errors.badRequest('Name is already in use!');
  const policy = Number((realm.properties as Record<string, unknown>).bot_creation_policy ?? BOT_CREATION_EVERYONE);
  checkCreationPolicy(user, policy, botType);
  if (!allowedBotTypes(user, policy).includes(botType)) throw errors.badRequest('Invalid bot type');
  if (!INTERFACE_TYPES.includes(bot.interface_type ?? 1)) throw errors.badRequest('Invalid interface type');
  if (bot.file_count > 1) throw errors.badRequest('You may only upload one file at a time');
  const sending = bot.default_sending_stream === undefined ? null : await botDefaultChannel(ctx, user, bot.default_sending_stream);
  const register = bot.default_events_register_stream === undefined ? null : await botDefaultChannel(ctx, user, bot.default_events_register_stream);

  const defaults: BotDefaultChanged[] = [];
  const change = (property: BotDefaultChanged['data']['property'], value: number | boolean) => ({ type: 'BotDefaultChanged' as const, data: { user_id: 0, property, value } });
  if (sending !== null) defaults.push(change('default_sending_stream', sending));
  if (register !== null) defaults.push(change('default_events_register_stream', register));
  if (bot.default_all_public_streams === true) defaults.push(change('default_all_public_streams', true));
  // As the real server: an outgoing webhook bot gets its service (named after the bot unless the
  // request names it) with a token of its own; an empty payload_url is kept, and fails at delivery.
  const service = botType === BotType.OUTGOING_WEBHOOK
    ? { name: bot.service_name || shortName, base_url: typeof bot.payload_url === 'string' ? bot.payload_url : '', interface: bot.interface_type ?? 1, token: generateApiKey() }
    : undefined;
  const created = await createUser(ctx, meta, { email, full_name: fullName, role: Role.MEMBER, bot_type: botType, bot_owner_id: user.id, service }, async (userId) =>
    defaults.length === 0 ? [] : [{ streamId: userStream(userId), expectedVersion: undefined, events: defaults.map((e) => ({ ...e, data: { ...e.data, user_id: userId } })) }]);
  return { ...created, default_sending_stream_id: sending, default_events_register_stream_id: register };
}

/**
 * PATCH /bots/{id} with service_payload_url (and service_interface, 1 by default): the bot's
 * webhook posts there from now on, in that format. The URL must be http(s), as the real server's
 * URL check; the command fails for a bot without a service.
 */
export async function botServiceChange(ctx: ServiceContext, user: UserRow, bot: UserRow, payloadUrl: unknown, iface: number): Promise<UserCommand> {
  if (typeof payloadUrl !== 'string' || !isHttpUrl(payloadUrl)) throw errors.badRequest('service_payload_url is not a URL');
  if (!INTERFACE_TYPES.includes(iface)) throw errors.badRequest('Invalid interface type');
  const hasService = (await getBotService(ctx.db, bot.id)) !== undefined;
  return { type: 'ChangeBotService', actor: actorOf(user), base_url: payloadUrl, interface: iface, has_service: hasService };
}
