import { errors } from '../domain/errors.js';
import { isAdminRole } from '../domain/roles.js';
import {
  decideRealmDefaults,
  decideSettings,
  validateNewPassword,
  validateSettingChanges,
  validateTimezone,
} from '../domain/settings/decider.js';
import { validateFullName } from '../domain/users/decider.js';
import type { StreamAppend } from '../eventstore/types.js';
import { getRealm, type RealmRow } from '../read/realm.js';
import type { UserRow } from '../read/users.js';
import { realmStream } from './bootstrap.js';
import { metadataOf, type RequestMeta, type ServiceContext } from './context.js';
import { deleteAllDrafts } from './drafts.js';
import { prepareEmailChange, sendEmailChangeConfirmation } from './email-change.js';
import type { Mailer } from './mailer.js';
import { hashPassword, verifyPassword } from './secrets.js';
import { streamVersion } from './stream-version.js';
import { checkNameUnique, requireUser, userStream } from './users.js';

export interface SettingsRequest {
  /** Personal settings by name (only the ones the client sent). */
  settings: Record<string, unknown>;
  full_name?: string;
  email?: string;
  timezone?: string;
  old_password?: string;
  new_password?: string;
}

/**
 * PATCH /settings. Every value is checked before anything is recorded, and all changes to the
 * user are appended together: one invalid value leaves the account exactly as it was.
 */
export async function changeOwnSettings(
  ctx: ServiceContext,
  meta: RequestMeta,
  user: UserRow,
  realm: RealmRow,
  request: SettingsRequest,
  mailer: Mailer,
): Promise<void> {
  // With name changes disabled a member's new name is dropped without a word (the real server's
  // reasoning: only a client working around its own interface sends one); administrators may.
  if (request.full_name !== undefined && realm.properties.name_changes_disabled === true && !isAdminRole(user.role)) {
    request = { ...request, full_name: undefined };
  }
  if (user.is_bot) throw errors.badRequest('This endpoint does not accept bot requests.');
  validateSettingChanges(request.settings);
  if (request.timezone !== undefined) validateTimezone(request.timezone);
  if (request.full_name !== undefined) {
    validateFullName(request.full_name);
    if (request.full_name !== user.full_name) await checkNameUnique(ctx.db, realm, request.full_name, user.id);
  }
  let newPasswordHash: string | undefined;
  if (request.new_password !== undefined) {
    if (!(await verifyPassword(request.old_password ?? '', user.password_hash))) throw errors.badRequest('Wrong password!');
    validateNewPassword(request.new_password);
    newPasswordHash = await hashPassword(request.new_password);
  }
  const emailChange = request.email !== undefined ? await prepareEmailChange(ctx, meta, user, request.email) : null;

  const { events } = await ctx.commands.run(metadataOf(meta), async () => {
    const row = await requireUser(ctx.db, user.id, meta.realmId);
    const userEvents = decideSettings(
      {
        type: 'ChangeOwnSettings',
        settings: request.settings,
        full_name: request.full_name,
        timezone: request.timezone,
        new_password_hash: newPasswordHash,
      },
      { user_id: row.id, is_bot: row.is_bot, full_name: row.full_name, timezone: row.timezone, settings: row.settings },
    );
    const appends: StreamAppend[] = [{ streamId: userStream(row.id), expectedVersion: row.version, events: userEvents }];
    if (emailChange) appends.push(emailChange.append);
    return { appends, result: undefined };
  });

  if (emailChange) await sendEmailChangeConfirmation(mailer, realm, user, emailChange);
  // Turning draft synchronization off deletes the drafts the server holds (the drafts area
  // refuses new ones from then on).
  const syncTurnedOff = events.some(
    (e) => e.type === 'UserSettingsChanged' && (e.data.changes as Record<string, unknown>).enable_drafts_synchronization === false,
  );
  if (syncTurnedOff) await deleteAllDrafts(ctx, meta, user.id);
}

/** PATCH /realm/user_settings_defaults: changes what users created from now on start with. */
export async function changeRealmUserSettingsDefaults(
  ctx: ServiceContext,
  meta: RequestMeta,
  user: UserRow,
  settings: Record<string, unknown>,
): Promise<void> {
  if (!isAdminRole(user.role)) throw errors.mustBeAdmin();
  validateSettingChanges(settings);
  await ctx.commands.run(metadataOf(meta), async () => {
    const streamId = realmStream(meta.realmId);
    const version = await streamVersion(ctx, streamId);
    const realm = await getRealm(ctx.db, meta.realmId);
    if (!realm) throw errors.badRequest('Invalid organization');
    const events = decideRealmDefaults(
      { actor_is_admin: isAdminRole(user.role), settings },
      { realm_id: realm.id, defaults: realm.user_settings_defaults },
    );
    return { appends: [{ streamId, expectedVersion: version, events }], result: undefined };
  });
}
