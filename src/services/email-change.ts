import { createHash, randomBytes } from 'node:crypto';
import { errors } from '../domain/errors.js';
import { emailOutsideDomains } from '../domain/realm-admin/domains.js';
import { isAdminRole } from '../domain/roles.js';
import type { EmailChangeConfirmed, EmailChangeRequested } from '../domain/settings/events.js';
import type { UserEmailChanged } from '../domain/users/events.js';
import type { StreamAppend } from '../eventstore/types.js';
import type { RealmRow } from '../read/realm.js';
import { getRealm } from '../read/realm.js';
import { getUserById, type UserRow } from '../read/users.js';
import { metadataOf, type RequestMeta, type ServiceContext } from './context.js';
import type { Mailer } from './mailer.js';
import { listRealmDomains } from './realm-domains.js';
import { userStream } from './users.js';

/** Confirmation links stay valid for a day, like the real server's. */
const LINK_VALIDITY_MS = 24 * 60 * 60 * 1000;
const ADDRESS = /^[^\s@<>(),;:"[\]\\]+@[^\s@<>(),;:"[\]\\]+\.[^\s@<>(),;:"[\]\\]+$/;

const keyHash = (key: string) => createHash('sha256').update(key).digest('hex');
const requestStream = (hash: string) => `email-change-${hash}`;

export interface PreparedEmailChange {
  append: StreamAppend;
  key: string;
  newEmail: string;
}

async function addressInUse(ctx: ServiceContext, realmId: number, email: string, exceptUserId: number): Promise<boolean> {
  const row = await ctx.db
    .selectFrom('users')
    .select('id')
    .where('realm_id', '=', realmId)
    .where((eb) => eb(eb.fn('lower', ['delivery_email']), '=', email.toLowerCase()))
    .where('id', '!=', exceptUserId)
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * Validates a requested address and builds the request event (appended with the rest of the
 * settings change). null: the address is the current one, nothing to do.
 */
export async function prepareEmailChange(ctx: ServiceContext, meta: RequestMeta, user: UserRow, email: string): Promise<PreparedEmailChange | null> {
  const newEmail = email.trim();
  if (newEmail === user.delivery_email) return null;
  const properties = ((await getRealm(ctx.db, user.realm_id))?.properties ?? {}) as Record<string, unknown>;
  if (properties.email_changes_disabled === true && !isAdminRole(user.role)) {
    throw errors.badRequest('Email address changes are disabled in this organization.');
  }
  if (!ADDRESS.test(newEmail) || newEmail.length > 254) throw errors.badRequest('Invalid address.');
  // The organization's sign-up restriction holds for a changed address too.
  const outside = emailOutsideDomains(newEmail, properties.emails_restricted_to_domains === true, await listRealmDomains(ctx.db, user.realm_id));
  if (outside) throw errors.badRequest(outside);
  if (await addressInUse(ctx, user.realm_id, newEmail, user.id)) throw errors.badRequest('Already has an account.');
  const key = randomBytes(24).toString('base64url');
  const hash = keyHash(key);
  const event: EmailChangeRequested = {
    type: 'EmailChangeRequested',
    data: {
      user_id: user.id,
      realm_id: user.realm_id,
      old_email: user.delivery_email,
      new_email: newEmail,
      key_hash: hash,
      expires_at: new Date(meta.now.getTime() + LINK_VALIDITY_MS).toISOString(),
    },
  };
  return { append: { streamId: requestStream(hash), expectedVersion: -1, events: [event] }, key, newEmail };
}

export const confirmationPath = (key: string) => `/accounts/confirm_new_email/${key}`;

export async function sendEmailChangeConfirmation(mailer: Mailer, realm: RealmRow, user: UserRow, prepared: PreparedEmailChange): Promise<void> {
  const link = `${realm.url}${confirmationPath(prepared.key)}`;
  await mailer.send({
    to: prepared.newEmail,
    subject: `Verify your new email address for ${realm.name}`,
    text: [
      `Hi ${user.full_name},`,
      '',
      `We received a request to change the email address for your account on ${realm.url}`,
      `from ${user.delivery_email} to ${prepared.newEmail}.`,
      '',
      'To confirm this change, follow this link (valid for 24 hours):',
      link,
      '',
      'If you did not request this change, you can ignore this email.',
    ].join('\n'),
  });
}

export type ConfirmOutcome =
  | { ok: true; old_email: string; new_email: string; user_id: number }
  | { ok: false; reason: 'invalid' | 'used' | 'expired' | 'in_use' };

/** Follows a confirmation link: the address changes only now, once, and only if still valid. */
export async function confirmEmailChange(ctx: ServiceContext, meta: RequestMeta, key: string, mailer: Mailer, realm: RealmRow): Promise<ConfirmOutcome> {
  if (!/^[A-Za-z0-9_-]{20,100}$/.test(key)) return { ok: false, reason: 'invalid' };
  const hash = keyHash(key);
  const streamId = requestStream(hash);
  const first = await ctx.store.readStream(streamId);
  const request = first[0];
  if (!request || request.type !== 'EmailChangeRequested') return { ok: false, reason: 'invalid' };
  const data = request.data as EmailChangeRequested['data'];
  const { result } = await ctx.commands.run(metadataOf({ ...meta, actorId: data.user_id, realmId: data.realm_id }), async () => {
    const events = await ctx.store.readStream(streamId);
    if (events.length > 1) return { appends: [], result: { ok: false, reason: 'used' } as ConfirmOutcome };
    if (Date.parse(data.expires_at) < meta.now.getTime()) return { appends: [], result: { ok: false, reason: 'expired' } as ConfirmOutcome };
    const user = await getUserById(ctx.db, data.user_id);
    // A newer change (or a deactivation) since the request makes the link stale.
    if (!user || !user.is_active || user.delivery_email !== data.old_email) return { appends: [], result: { ok: false, reason: 'invalid' } as ConfirmOutcome };
    if (await addressInUse(ctx, user.realm_id, data.new_email, user.id)) return { appends: [], result: { ok: false, reason: 'in_use' } as ConfirmOutcome };
    const confirmed: EmailChangeConfirmed = { type: 'EmailChangeConfirmed', data: { user_id: user.id, key_hash: hash } };
    const changed: UserEmailChanged = { type: 'UserEmailChanged', data: { user_id: user.id, email: data.new_email, delivery_email: data.new_email } };
    return {
      appends: [
        { streamId, expectedVersion: 1, events: [confirmed] },
        { streamId: userStream(user.id), expectedVersion: user.version, events: [changed] },
      ],
      result: { ok: true, old_email: data.old_email, new_email: data.new_email, user_id: user.id } as ConfirmOutcome,
    };
  });
  if (result.ok) {
    await mailer.send({
      to: result.old_email,
      subject: `Email address changed for ${realm.name}`,
      text: `The email address for your account on ${realm.url} was changed from ${result.old_email} to ${result.new_email}.\n`,
    });
  }
  return result;
}
