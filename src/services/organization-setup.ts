import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { Role } from '../domain/roles.js';
import type { RealmPropertiesChanged } from '../domain/realm/events.js';
import { getRealm } from '../read/realm.js';
import { listUsers } from '../read/users.js';
import { createChannelOnce } from './channels.js';
import { metadataOf, type RequestMeta, type ServiceContext } from './context.js';
import { react, sendMessage } from './messages.js';
import { streamVersion } from './stream-version.js';
import { INTERNAL_CLIENT, SystemBot, ensureSystemBots } from './system-bots.js';
import { ANNOUNCEMENTS_CHANNEL, CORE_TEAM_CHANNEL, welcomeMessages } from './welcome-messages.js';

const SETUP_LOCK_KEY = 7_340_130;
const realmStream = (realmId: number) => `realm-${realmId}`;

/**
 * Gives the organization what the real server creates with it: the system bots, `general` (the
 * default channel and the announcements channel) with every member, the private `core team` with
 * the owners, and Welcome Bot's first messages. Every step checks what exists, so it runs on every
 * start: a second start adds nothing, an interrupted one is completed, and a channel the
 * organization later renamed or archived is not created again.
 */
export async function completeOrganization(ctx: ServiceContext, realmId: number): Promise<void> {
  // On PostgreSQL several processes may start together; the embedded database has one process.
  if (!ctx.config.databaseUrl) return setUp(ctx, realmId);
  await ctx.db.connection().execute(async (conn) => {
    await sql`SELECT pg_advisory_lock(${SETUP_LOCK_KEY})`.execute(conn);
    try {
      await setUp(ctx, realmId);
    } finally {
      await sql`SELECT pg_advisory_unlock(${SETUP_LOCK_KEY})`.execute(conn);
    }
  });
}

async function setUp(ctx: ServiceContext, realmId: number): Promise<void> {
  let realm = await getRealm(ctx.db, realmId);
  if (!realm) return;
  const bots = await ensureSystemBots(ctx, realm);
  const humans = (await listUsers(ctx.db, realm.id)).filter((u) => u.is_active && !u.is_bot);
  const owners = humans.filter((u) => u.role === Role.OWNER);
  const creator = owners[0];
  if (!creator) return;
  const meta: RequestMeta = { actorId: null, realmId, client: 'bootstrap', requestId: randomUUID(), now: new Date() };
  const generalId = await createChannelOnce(ctx, meta, realm, creator, ANNOUNCEMENTS_CHANNEL, humans);
  const coreTeamId = await createChannelOnce(ctx, meta, realm, creator, CORE_TEAM_CHANNEL, owners);
  const changes: Record<string, number> = {};
  if (generalId !== undefined) {
    changes.new_stream_announcements_stream_id = generalId;
    changes.zulip_update_announcements_stream_id = generalId;
  }
  if (coreTeamId !== undefined) changes.signup_announcements_stream_id = coreTeamId;
  if (Object.keys(changes).length > 0) {
    const event: RealmPropertiesChanged = { type: 'RealmPropertiesChanged', data: { realm_id: realmId, changes } };
    await ctx.commands.run(metadataOf(meta), async () => ({
      appends: [{ streamId: realmStream(realmId), expectedVersion: await streamVersion(ctx, realmStream(realmId)), events: [event] }],
      result: undefined,
    }));
    realm = (await getRealm(ctx.db, realmId)) ?? realm;
  }
  const welcomeBot = bots.get(SystemBot.WELCOME.email);
  if (!welcomeBot) return;
  // Only channels created just now get their welcome messages: a rerun sends none.
  const created = new Map<string, number>();
  if (generalId !== undefined) created.set(ANNOUNCEMENTS_CHANNEL.name, generalId);
  if (coreTeamId !== undefined) created.set(CORE_TEAM_CHANNEL.name, coreTeamId);
  for (const message of welcomeMessages()) {
    const channelId = created.get(message.channel);
    if (channelId === undefined) continue;
    const sendMeta = { ...meta, client: INTERNAL_CLIENT, requestId: randomUUID(), now: new Date() };
    const { id } = await sendMessage(ctx, sendMeta, welcomeBot, realm, { type: 'stream', to: channelId, topic: message.topic, content: message.content });
    if (message.reaction) await react(ctx, { ...sendMeta, requestId: randomUUID() }, welcomeBot, realm, id, 'add', { emoji_name: message.reaction });
  }
}
