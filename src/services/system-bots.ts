import { randomUUID } from 'node:crypto';
import type { Db } from '../db/database.js';
import { Role } from '../domain/roles.js';
import { getUserByEmail, type UserRow } from '../read/users.js';
import { realmHost, type RealmRow } from '../read/realm.js';
import { createUser } from './users.js';
import type { ServiceContext } from './context.js';

/** The real server's internal bot domain: its system bots are notification-bot@zulip.com and so on. */
export const INTERNAL_BOT_DOMAIN = 'zulip.com';

export const SystemBot = {
  NOTIFICATION: { email: `notification-bot@${INTERNAL_BOT_DOMAIN}`, full_name: 'Notification Bot' },
  WELCOME: { email: `welcome-bot@${INTERNAL_BOT_DOMAIN}`, full_name: 'Welcome Bot' },
} as const;

export type SystemBotSpec = (typeof SystemBot)[keyof typeof SystemBot];

/** Generic bots, as the real server's system bots are. */
const DEFAULT_BOT = 1;

/** The client name the real server records for messages its bots send. */
export const INTERNAL_CLIENT = 'Internal';

export async function getSystemBot(db: Db, realm: RealmRow, bot: SystemBotSpec): Promise<UserRow | undefined> {
  const row = await getUserByEmail(db, realm.id, bot.email, realmHost(realm));
  return row?.is_system_bot ? row : undefined;
}

export async function listSystemBots(db: Db, realmId: number): Promise<UserRow[]> {
  return db.selectFrom('users').selectAll().where('realm_id', '=', realmId).where('is_system_bot', '=', true).orderBy('id').execute();
}

/** Creates the system bots the organization lacks; returns them all. */
export async function ensureSystemBots(ctx: ServiceContext, realm: RealmRow): Promise<Map<string, UserRow>> {
  const bots = new Map<string, UserRow>();
  for (const spec of Object.values(SystemBot)) {
    let row = await getSystemBot(ctx.db, realm, spec);
    if (!row) {
      const meta = { actorId: null, realmId: realm.id, client: 'bootstrap', requestId: randomUUID(), now: new Date() };
      await createUser(ctx, meta, { ...spec, role: Role.MEMBER, bot_type: DEFAULT_BOT, bot_owner_id: null, is_system_bot: true });
      row = await getSystemBot(ctx.db, realm, spec);
    }
    if (row) bots.set(spec.email, row);
  }
  return bots;
}
