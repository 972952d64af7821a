import { createHash, randomBytes } from 'node:crypto';
import type { Db } from '../db/database.js';
import { errors } from '../domain/errors.js';
import { emailOutsideDomains } from '../domain/realm-admin/domains.js';
import { listRealmDomains } from './realm-domains.js';
import { hasPolicy } from '../domain/channels/decider.js';
import { DEFAULT_INVITE_EXPIRES_IN_MINUTES, checkInviteAs, checkInvitees, invitationFailed, mayInvite, parseInviteeEmails } from '../domain/invites/decider.js';
import type { InvitationAccepted, InvitationSent } from '../domain/invites/events.js';
import { isAdminRole } from '../domain/roles.js';
import type { StreamAppend } from '../eventstore/types.js';
import type { RealmRow } from '../read/realm.js';
import type { UserRow } from '../read/users.js';
import { canReadStreamContent, isSubscribed } from '../visibility.js';
import { actorOf, realmSettingsOf } from './channels.js';
import { metadataOf, type RequestMeta, type ServiceContext } from './context.js';
import type { Mailer } from './mailer.js';
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
  if (params.invitee_emails.trim() === '') throw errors.badRequest('You must specify at least one email address.');
  const emails = parseInviteeEmails(params.invitee_emails);
  const streamIds = await checkInviteStreams(ctx, user, realm, params.stream_ids, meta.now);
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
  for (const email of invite) {
    const key = randomBytes(24).toString('base64url');
    const invite_id = await ctx.commands.nextId('invite_id_seq');
    const event: InvitationSent = {
      type: 'InvitationSent',
      data: {
        invite_id, realm_id: realm.id, email, invited_by_user_id: user.id, invited_as: inviteAs, stream_ids: streamIds,
        invited, expiry_date: minutes === null ? null : invited + minutes * 60, key_hash: keyHash(key),
      },
    };
    appends.push({ streamId: inviteStream(invite_id), expectedVersion: -1, events: [event] });
    sent.push({ email, key });
  }
  await ctx.commands.run(metadataOf(meta), async () => ({ appends, result: undefined }));
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

/** GET /invites: the pending, unexpired invitations; administrators see everyone's. */
export async function listInvites(db: Db, user: UserRow, now: Date): Promise<Array<Record<string, unknown>>> {
  let query = db.selectFrom('invites').selectAll().where('realm_id', '=', user.realm_id).where('accepted_user_id', 'is', null);
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
      if (history.length !== 1) throw errors.badRequest('This invitation has already been used.');
      const accepted: InvitationAccepted = { type: 'InvitationAccepted', data: { invite_id: invite.id, realm_id: invite.realm_id, user_id: userId } };
      return [{ streamId: inviteStream(invite.id), expectedVersion: history[0]!.stream_version, events: [accepted] }];
    },
  );
  return { ok: true, user_id: created.user_id, email: invite.email };
}
