import { createHash, randomBytes } from 'node:crypto';
import { sql, type ExpressionBuilder } from 'kysely';
import type { Db } from '../db/database.js';
import type { Database } from '../db/schema.js';
import { errors } from '../domain/errors.js';
import { emailOutsideDomains } from '../domain/realm-admin/domains.js';
import { listRealmDomains } from './realm-domains.js';
import { destroyEndedKeys } from './ended-keys.js';
import { inviteKeyId } from '../eventstore/crypto/personal-fields.js';
import { hasPolicy } from '../domain/channels/decider.js';
import { DEFAULT_INVITE_EXPIRES_IN_MINUTES, checkInviteAs, checkOldEnoughToInvite, checkInvitees, invitationFailed, mayInvite, parseInviteeEmails } from '../domain/invites/decider.js';
import type { InvitationAccepted, InvitationSent, MultiuseInviteCreated, MultiuseInviteUsed } from '../domain/invites/events.js';
import { recursiveMembers } from '../read/user-groups.js';
import { isAdminRole } from '../domain/roles.js';
import type { StreamAppend } from '../eventstore/types.js';
import type { RealmRow } from '../read/realm.js';
import type { UserRow } from '../read/users.js';
import { canReadStreamContent, isSubscribed } from '../visibility.js';
import { actorOf, realmSettingsOf } from './channels.js';
import { metadataOf, type RequestMeta, type ServiceContext } from './context.js';
import type { Mailer } from './mailer.js';
import { streamVersion } from './stream-version.js';
import { createUser } from './users.js';

const keyHash = (key: string) => createHash('sha256').update(key).digest('hex');
const inviteStream = (inviteId: number) => `invite-${inviteId}`;
const seconds = (d: Date) => Math.floor(d.getTime() / 1000);

/** The page the invitation links to (outside /api/v1): it creates the account. */
export const invitationPath = (key: string) => `/accounts/do_confirm/${key}`;

export interface InviteParams {
  invitee_emails: string;
  invite_expires_in_minutes?: number | null;
  invite_as?: number;
  stream_ids: number[];
}

/** Checks the invited channels as the real server does: each one accessible, and the right to subscribe others. */
async function checkInviteStreams(ctx: ServiceContext, user: UserRow, realm: RealmRow, streamIds: readonly number[], now: Date): Promise<number[]> {
  const viewer = { user_id: user.id, role: user.role, realm_id: user.realm_id };
  const ids = [...new Set(streamIds)];
  for (const id of ids) {
    const stream = Number.isInteger(id) && id > 0 && id <= 2_147_483_647 ? await ctx.db.selectFrom('streams').selectAll().where('id', '=', id).executeTakeFirst() : undefined;
    if (!stream || stream.deactivated || !canReadStreamContent(viewer, stream, await isSubscribed(ctx.db, user.id, id))) {
      throw errors.badRequest(`Stream does not exist with id: ${id}. No invites were sent.`);
    }
  }
  if (ids.length > 0 && !hasPolicy(realmSettingsOf(realm, false).invite_to_stream_policy, actorOf(user, realm, now))) {
    throw errors.badRequest('You do not have permission to subscribe other users to streams.');
  }
  return ids;
}

/** POST /invites. Mails each invitee a link; addresses already in the organization are reported after. */
export async function sendInvites(ctx: ServiceContext, meta: RequestMeta, user: UserRow, realm: RealmRow, params: InviteParams, mailer: Mailer): Promise<void> {
  const actor = actorOf(user, realm, meta.now);
  if (!mayInvite(Number(realm.properties.invite_to_realm_policy ?? 1), actor)) throw errors.badRequest('Insufficient permission');
  const inviteAs = params.invite_as ?? 400;
  checkInviteAs(inviteAs, actor);
  // Only an empty parameter is refused: blank addresses are skipped (nothing left: nothing sent).
  if (params.invitee_emails === '') throw errors.badRequest('You must specify at least one email address.');
  const emails = parseInviteeEmails(params.invitee_emails);
  const streamIds = await checkInviteStreams(ctx, user, realm, params.stream_ids, meta.now);
  checkOldEnoughToInvite(realm.properties.invite_required !== false, user, seconds(new Date(user.date_joined)), seconds(meta.now));
  const existingRows = emails.length === 0 ? [] : await ctx.db
    .selectFrom('users')
    .select(['delivery_email', 'is_active'])
    .where('realm_id', '=', realm.id)
    .where((eb) => eb(eb.fn('lower', ['delivery_email']), 'in', emails.map((e) => e.toLowerCase())))
    .execute();
  const existing = new Map(existingRows.map((r) => [r.delivery_email.toLowerCase(), r]));
  const domains = await listRealmDomains(ctx.db, realm.id);
  const restricted = (realm.properties as Record<string, unknown>).emails_restricted_to_domains === true;
  const { invite, skipped } = checkInvitees(emails, existing, (email) => emailOutsideDomains(email, restricted, domains));
  const minutes = params.invite_expires_in_minutes === undefined ? DEFAULT_INVITE_EXPIRES_IN_MINUTES : params.invite_expires_in_minutes;
  const invited = seconds(meta.now);
  const sent: Array<{ email: string; key: string }> = [];
  const appends: StreamAppend[] = [];
  for (const [index, email] of invite.entries()) {
    const key = randomBytes(24).toString('base64url');
    const invite_id = await ctx.commands.nextId('invite_id_seq');
    const event: InvitationSent = {
      type: 'InvitationSent',
      data: {
        invite_id, realm_id: realm.id, email, invited_by_user_id: user.id, invited_as: inviteAs, stream_ids: streamIds,
        invited, expiry_date: minutes === null ? null : invited + minutes * 60, key_hash: keyHash(key),
        ...(index === 0 ? {} : { announces: false }),
      },
    };
    appends.push({ streamId: inviteStream(invite_id), expectedVersion: -1, events: [event] });
    sent.push({ email, key });
  }
  if (appends.length > 0) await ctx.commands.run(metadataOf(meta), async () => ({ appends, result: undefined }));
  for (const { email, key } of sent) await sendInvitationMail(mailer, realm, user, email, key, minutes);
  if (skipped.length > 0) {
    throw invitationFailed("Some of those addresses are already using Zulip, so we didn't send them an invitation. We did send invitations to everyone else!", skipped, true);
  }
}

async function sendInvitationMail(mailer: Mailer, realm: RealmRow, inviter: UserRow, email: string, key: string, minutes: number | null): Promise<void> {
  const validity = minutes === null ? 'This link does not expire.' : `This link is valid for ${minutes >= 1440 && minutes % 1440 === 0 ? `${minutes / 1440} day(s)` : `${minutes} minute(s)`}.`;
  await mailer.send({
    to: email,
    subject: `${inviter.full_name} invited you to join ${realm.name}`,
    text: [
      'Hi,',
      '',
      `${inviter.full_name} (${inviter.delivery_email}) wants you to join them on Zulip, in the organization ${realm.name} (${realm.url}).`,
      '',
      'To create your account, follow this link and choose your name and password:',
      `${realm.url}${invitationPath(key)}`,
      '',
      validity,
    ].join('\n'),
  });
}

/** An account made for the address ends every other invitation to it (the real server revokes them). */
const noAccountForAddress = ({ not, exists, selectFrom }: ExpressionBuilder<Database, 'invites'>) => not(exists(selectFrom('users').select('users.id')
  .whereRef('users.realm_id', '=', 'invites.realm_id')
  .where(sql<boolean>`lower(users.delivery_email) = lower(invites.email)`)));

/** GET /invites: the pending, unexpired invitations; administrators see everyone's. */
export async function listInvites(db: Db, user: UserRow, now: Date): Promise<Array<Record<string, unknown>>> {
  let query = db.selectFrom('invites').selectAll().where('realm_id', '=', user.realm_id).where('accepted_user_id', 'is', null)
    .where(noAccountForAddress);
  if (!isAdminRole(user.role)) query = query.where('invited_by_user_id', '=', user.id);
  const rows = await query.orderBy('id').execute();
  const nowSecs = seconds(now);
  return rows
    .filter((r) => r.expiry_date === null || Number(r.expiry_date) > nowSecs)
    .map((r) => ({
      id: r.id, invited_by_user_id: r.invited_by_user_id, invited: Number(r.invited), expiry_date: r.expiry_date === null ? null : Number(r.expiry_date),
      invited_as: r.invited_as, email: r.email, is_multiuse: false,
    }));
}

export type AcceptOutcome =
  | { ok: true; user_id: number; email: string }
  | { ok: false; reason: 'invalid' | 'used' | 'expired' | 'in_use' };

/** The invitation behind a link, or why it cannot be used. */
export async function pendingInvite(db: Db, key: string, now: Date) {
  if (!/^[A-Za-z0-9_-]{20,100}$/.test(key)) return { ok: false as const, reason: 'invalid' as const };
  const row = await db.selectFrom('invites').selectAll().where('key_hash', '=', keyHash(key)).executeTakeFirst();
  if (!row) return { ok: false as const, reason: 'invalid' as const };
  if (row.accepted_user_id !== null) return { ok: false as const, reason: 'used' as const };
  if (row.expiry_date !== null && Number(row.expiry_date) <= seconds(now)) return { ok: false as const, reason: 'expired' as const };
  return { ok: true as const, row };
}

/** Following the link: creates the account with the invited role and channels, and marks the invitation used, in one command. */
export async function acceptInvite(ctx: ServiceContext, meta: RequestMeta, key: string, fullName: string, password: string): Promise<AcceptOutcome> {
  const found = await pendingInvite(ctx.db, key, meta.now);
  if (!found.ok) return found;
  const invite = found.row;
  if (password.length < 6) throw errors.badRequest('The password is too short (at least 6 characters).');
  const taken = await ctx.db.selectFrom('users').select('id').where('realm_id', '=', invite.realm_id)
    .where((eb) => eb(eb.fn('lower', ['delivery_email']), '=', invite.email.toLowerCase())).executeTakeFirst();
  if (taken) return { ok: false, reason: 'in_use' };
  const streamIds = (invite.stream_ids as unknown as number[]).filter((id) => Number.isInteger(id));
  const created = await createUser(
    ctx,
    { ...meta, actorId: null, realmId: invite.realm_id },
    { email: invite.email, full_name: fullName, role: invite.invited_as, password, stream_ids: streamIds },
    async (userId) => {
      const history = await ctx.store.readStream(inviteStream(invite.id));
      // A resend keeps the invitation pending; an acceptance or a revocation ends it.
      if (history.some((e) => e.type === 'InvitationAccepted' || e.type === 'InvitationRevoked')) throw errors.badRequest('This invitation has already been used.');
      const accepted: InvitationAccepted = { type: 'InvitationAccepted', data: { invite_id: invite.id, realm_id: invite.realm_id, user_id: userId } };
      return [{ streamId: inviteStream(invite.id), expectedVersion: history.at(-1)!.stream_version, events: [accepted] }];
    },
  );
  // The address now lives in the account's own UserCreated, under the account's key.
  await destroyEndedKeys(ctx, [inviteKeyId(invite.id)]);
  return { ok: true, user_id: created.user_id, email: invite.email };
}

const multiuseStream = (inviteId: number) => `multiuse-invite-${inviteId}`;

/** The reusable link's page (outside /api/v1), as the real server's /join/<key>/. */
export const multiusePath = (key: string) => `/join/${key}/`;

/**
 * The real server's check on managing someone else's invitation: only administrators, and only
 * owners for an invitation to become an owner. One's own invitations are always one's to manage.
 */
function checkMayManage(user: UserRow, invite: { invited_by_user_id: number; invited_as: number }): void {
  if (invite.invited_by_user_id === user.id) return;
  if (invite.invited_as === 100 && user.role !== 100) throw errors.mustBeOwner();
  if (!isAdminRole(user.role)) throw errors.mustBeAdmin();
}

const noSuchInvitation = () => errors.badRequest('No such invitation');

/** A pending email invitation of the user's organization (accepted, revoked and expired ones are no longer managed). */
async function managedInvite(ctx: ServiceContext, user: UserRow, inviteId: number, now: Date) {
  const row = Number.isInteger(inviteId) && inviteId > 0 && inviteId <= 2_147_483_647
    ? await ctx.db.selectFrom('invites').selectAll().where('id', '=', inviteId).executeTakeFirst()
    : undefined;
  if (!row || row.realm_id !== user.realm_id || row.accepted_user_id !== null) throw noSuchInvitation();
  if (row.expiry_date !== null && Number(row.expiry_date) <= seconds(now)) throw noSuchInvitation();
  checkMayManage(user, row);
  return row;
}

/** DELETE /invites/{id}. */
export async function revokeInvite(ctx: ServiceContext, meta: RequestMeta, user: UserRow, inviteId: number): Promise<void> {
  await ctx.commands.run(metadataOf(meta), async () => {
    const row = await managedInvite(ctx, user, inviteId, meta.now);
    const history = await ctx.store.readStream(inviteStream(row.id));
    const events = [{ type: 'InvitationRevoked' as const, data: { invite_id: row.id, realm_id: row.realm_id, invited_by_user_id: row.invited_by_user_id } }];
    return { appends: [{ streamId: inviteStream(row.id), expectedVersion: history.at(-1)!.stream_version, events }], result: undefined };
  });
  await destroyEndedKeys(ctx, [inviteKeyId(inviteId)]);
}

/**
 * What deactivating these accounts does to the invitations they made, as the real server's
 * do_deactivate_user: their email invitations still waiting for an account and their live reusable
 * links stop working. The appends go in the deactivation's own command; the keys that sealed the
 * invitees' addresses are to be destroyed once it commits (`endedKeys`).
 */
export async function revocationsWithInviters(ctx: ServiceContext, realmId: number, inviterIds: readonly number[], now: Date): Promise<{ appends: StreamAppend[]; endedKeys: string[] }> {
  if (inviterIds.length === 0) return { appends: [], endedKeys: [] };
  const emailInvites = await ctx.db.selectFrom('invites').select(['id', 'realm_id', 'invited_by_user_id'])
    .where('realm_id', '=', realmId).where('invited_by_user_id', 'in', [...inviterIds]).where('accepted_user_id', 'is', null)
    .where(noAccountForAddress)
    .orderBy('id').execute();
  const links = await ctx.db.selectFrom('multiuse_invites').select(['id', 'realm_id', 'invited_by_user_id'])
    .where('realm_id', '=', realmId).where('invited_by_user_id', 'in', [...inviterIds]).where('revoked', '=', false)
    .where((eb) => eb.or([eb('expiry_date', 'is', null), eb('expiry_date', '>=', seconds(now))]))
    .orderBy('id').execute();
  const appends: StreamAppend[] = [];
  const revoked = (row: { id: number; realm_id: number; invited_by_user_id: number }) => ({
    invite_id: row.id, realm_id: row.realm_id, invited_by_user_id: row.invited_by_user_id, inviter_deactivated: true as const,
    // One invites_changed for them all, as the real server's single notify_invites_changed.
    ...(appends.length === 0 ? {} : { announces: false }),
  });
  for (const row of emailInvites) {
    const streamId = inviteStream(row.id);
    appends.push({ streamId, expectedVersion: await streamVersion(ctx, streamId), events: [{ type: 'InvitationRevoked', data: revoked(row) }] });
  }
  for (const row of links) {
    const streamId = multiuseStream(row.id);
    appends.push({ streamId, expectedVersion: await streamVersion(ctx, streamId), events: [{ type: 'MultiuseInviteRevoked', data: revoked(row) }] });
  }
  return { appends, endedKeys: emailInvites.map((row) => inviteKeyId(row.id)) };
}

/** POST /invites/{id}/resend: mails a new link (the old one stops working); answers the new invitation time. */
export async function resendInvite(ctx: ServiceContext, meta: RequestMeta, user: UserRow, realm: RealmRow, inviteId: number, mailer: Mailer): Promise<number> {
  const key = randomBytes(24).toString('base64url');
  const invited = seconds(meta.now);
  const { result: row } = await ctx.commands.run(metadataOf(meta), async () => {
    const row = await managedInvite(ctx, user, inviteId, meta.now);
    const history = await ctx.store.readStream(inviteStream(row.id));
    const events = [{
      type: 'InvitationResent' as const,
      data: { invite_id: row.id, realm_id: row.realm_id, invited_by_user_id: row.invited_by_user_id, invited, key_hash: keyHash(key) },
    }];
    return { appends: [{ streamId: inviteStream(row.id), expectedVersion: history.at(-1)!.stream_version, events }], result: row };
  });
  const inviter = await ctx.db.selectFrom('users').selectAll().where('id', '=', row.invited_by_user_id).executeTakeFirst();
  const minutes = row.expiry_date === null ? null : Math.max(1, Math.round((Number(row.expiry_date) - invited) / 60));
  await sendInvitationMail(mailer, realm, (inviter as UserRow | undefined) ?? user, row.email, key, minutes);
  return invited;
}

/** Whether the user belongs (through any subgroup) to the group a group-valued setting names (by name or id). */
async function inSettingGroup(db: Db, user: UserRow, setting: unknown): Promise<boolean> {
  let query = db.selectFrom('user_groups').select('id').where('realm_id', '=', user.realm_id);
  query = typeof setting === 'number' ? query.where('id', '=', setting) : query.where('name', '=', String(setting)).where('is_system_group', '=', true);
  const group = await query.executeTakeFirst();
  return group !== undefined && (await recursiveMembers(db, group.id)).includes(user.id);
}

export interface MultiuseInviteParams {
  invite_expires_in_minutes?: number | null;
  invite_as?: number;
  stream_ids?: number[];
}

/** POST /invites/multiuse: a link anyone may use to join, until it expires or is revoked. */
export async function createMultiuseInvite(ctx: ServiceContext, meta: RequestMeta, user: UserRow, realm: RealmRow, params: MultiuseInviteParams): Promise<string> {
  if (!(await inSettingGroup(ctx.db, user, realm.properties.create_multiuse_invite_group ?? 'role:administrators'))) throw errors.badRequest('Insufficient permission');
  const actor = actorOf(user, realm, meta.now);
  const inviteAs = params.invite_as ?? 400;
  checkInviteAs(inviteAs, actor);
  const viewer = { user_id: user.id, role: user.role, realm_id: user.realm_id };
  const streamIds = [...new Set(params.stream_ids ?? [])];
  for (const id of streamIds) {
    const stream = Number.isInteger(id) && id > 0 && id <= 2_147_483_647 ? await ctx.db.selectFrom('streams').selectAll().where('id', '=', id).executeTakeFirst() : undefined;
    if (!stream || stream.realm_id !== user.realm_id || stream.deactivated || !canReadStreamContent(viewer, stream, await isSubscribed(ctx.db, user.id, id))) {
      throw errors.badRequest(`Invalid stream ID ${id}. No invites were sent.`);
    }
  }
  if (streamIds.length > 0 && !hasPolicy(realmSettingsOf(realm, false).invite_to_stream_policy, actor)) {
    throw errors.badRequest('You do not have permission to subscribe other users to streams.');
  }
  const minutes = params.invite_expires_in_minutes === undefined ? DEFAULT_INVITE_EXPIRES_IN_MINUTES : params.invite_expires_in_minutes;
  const invited = seconds(meta.now);
  const key = randomBytes(24).toString('base64url');
  const invite_id = await ctx.commands.nextId('invite_id_seq');
  const event: MultiuseInviteCreated = {
    type: 'MultiuseInviteCreated',
    data: {
      invite_id, realm_id: realm.id, invited_by_user_id: user.id, invited_as: inviteAs, stream_ids: streamIds,
      invited, expiry_date: minutes === null ? null : invited + minutes * 60, key,
    },
  };
  await ctx.commands.run(metadataOf(meta), async () => ({ appends: [{ streamId: multiuseStream(invite_id), expectedVersion: -1, events: [event] }], result: undefined }));
  return `${realm.url}${multiusePath(key)}`;
}

/** DELETE /invites/multiuse/{id}. */
export async function revokeMultiuseInvite(ctx: ServiceContext, meta: RequestMeta, user: UserRow, inviteId: number): Promise<void> {
  await ctx.commands.run(metadataOf(meta), async () => {
    const row = Number.isInteger(inviteId) && inviteId > 0 && inviteId <= 2_147_483_647
      ? await ctx.db.selectFrom('multiuse_invites').selectAll().where('id', '=', inviteId).executeTakeFirst()
      : undefined;
    if (!row || row.realm_id !== user.realm_id) throw noSuchInvitation();
    checkMayManage(user, row);
    if (row.revoked) throw errors.badRequest('Invitation has already been revoked');
    const history = await ctx.store.readStream(multiuseStream(row.id));
    const events = [{ type: 'MultiuseInviteRevoked' as const, data: { invite_id: row.id, realm_id: row.realm_id, invited_by_user_id: row.invited_by_user_id } }];
    return { appends: [{ streamId: multiuseStream(row.id), expectedVersion: history.at(-1)!.stream_version, events }], result: undefined };
  });
}

/** GET /invites' reusable links: live ones only; administrators see everyone's. */
export async function listMultiuseInvites(db: Db, user: UserRow, realmUrl: string, now: Date): Promise<Array<Record<string, unknown>>> {
  let query = db.selectFrom('multiuse_invites').selectAll().where('realm_id', '=', user.realm_id).where('revoked', '=', false);
  if (!isAdminRole(user.role)) query = query.where('invited_by_user_id', '=', user.id);
  const rows = await query.orderBy('id').execute();
  const nowSecs = seconds(now);
  return rows
    .filter((r) => r.expiry_date === null || Number(r.expiry_date) > nowSecs)
    .map((r) => ({
      id: r.id, invited_by_user_id: r.invited_by_user_id, invited: Number(r.invited), expiry_date: r.expiry_date === null ? null : Number(r.expiry_date),
      invited_as: r.invited_as, link_url: `${realmUrl}${multiusePath(r.key)}`, is_multiuse: true,
    }));
}

/** The reusable link behind a key, or why it cannot be used. */
export async function pendingMultiuseInvite(db: Db, key: string, now: Date) {
  if (!/^[A-Za-z0-9_-]{20,100}$/.test(key)) return { ok: false as const, reason: 'invalid' as const };
  const row = await db.selectFrom('multiuse_invites').selectAll().where('key', '=', key).executeTakeFirst();
  if (!row || row.revoked) return { ok: false as const, reason: 'invalid' as const };
  if (row.expiry_date !== null && Number(row.expiry_date) <= seconds(now)) return { ok: false as const, reason: 'expired' as const };
  return { ok: true as const, row };
}

/** Joining through a reusable link: an account for the given address, with the link's role and channels. */
export async function acceptMultiuseInvite(ctx: ServiceContext, meta: RequestMeta, key: string, email: string, fullName: string, password: string): Promise<AcceptOutcome> {
  const found = await pendingMultiuseInvite(ctx.db, key, meta.now);
  if (!found.ok) return found;
  const invite = found.row;
  if (password.length < 6) throw errors.badRequest('The password is too short (at least 6 characters).');
  const address = email.trim();
  const taken = await ctx.db.selectFrom('users').select('id').where('realm_id', '=', invite.realm_id)
    .where((eb) => eb(eb.fn('lower', ['delivery_email']), '=', address.toLowerCase())).executeTakeFirst();
  if (taken) return { ok: false, reason: 'in_use' };
  const streamIds = (invite.stream_ids as unknown as number[]).filter((id) => Number.isInteger(id));
  const created = await createUser(
    ctx,
    { ...meta, actorId: null, realmId: invite.realm_id },
    { email: address, full_name: fullName, role: invite.invited_as, password, stream_ids: streamIds },
    async (userId) => {
      // Revoked meanwhile: the link's stream has moved past its creation and must still say "live".
      const history = await ctx.store.readStream(multiuseStream(invite.id));
      if (history.some((e) => e.type === 'MultiuseInviteRevoked')) throw errors.badRequest('This invitation link is invalid.');
      const used: MultiuseInviteUsed = { type: 'MultiuseInviteUsed', data: { invite_id: invite.id, realm_id: invite.realm_id, invited_by_user_id: invite.invited_by_user_id, user_id: userId } };
      return [{ streamId: multiuseStream(invite.id), expectedVersion: history.at(-1)!.stream_version, events: [used] }];
    },
  );
  return { ok: true, user_id: created.user_id, email: address };
}
