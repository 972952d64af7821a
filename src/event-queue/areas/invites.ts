import type { DataOf } from '../../domain/events.js';
import type { RevokedWithInviter } from '../../domain/invites/events.js';
import { Role } from '../../domain/roles.js';
import { registerTranslator } from '../translators.js';

// invites_changed tells the clients that may manage the invitation (the inviter and the
// organization's administrators) to fetch GET /invites again; it carries nothing else.
for (const type of ['InvitationSent', 'InvitationAccepted'] as const) {
  registerTranslator(type, async (event, db) => {
    const d = event.data as DataOf<typeof type>;
    // One invites_changed for all the invitations of one request.
    if (type === 'InvitationSent' && (d as DataOf<'InvitationSent'>).announces === false) return null;
    const admins = await db.selectFrom('users').select('id').where('realm_id', '=', d.realm_id).where('role', '<=', Role.ADMINISTRATOR).where('is_active', '=', true).execute();
    const inviter = type === 'InvitationSent'
      ? (d as DataOf<'InvitationSent'>).invited_by_user_id
      : (await db.selectFrom('invites').select('invited_by_user_id').where('id', '=', d.invite_id).executeTakeFirst())?.invited_by_user_id;
    const audience = new Set(admins.map((a) => a.id));
    if (inviter !== undefined) audience.add(inviter);
    return { audience, forUser: () => [{ type: 'invites_changed' }] };
  });
}

// The later changes carry the inviter: the invitation's row may be gone when a queue reads them.
for (const type of ['InvitationRevoked', 'InvitationResent', 'MultiuseInviteCreated', 'MultiuseInviteRevoked', 'MultiuseInviteUsed'] as const) {
  registerTranslator(type, async (event, db) => {
    const d = event.data as DataOf<typeof type> & Readonly<RevokedWithInviter>;
    if (d.announces === false) return null;
    const admins = await db.selectFrom('users').select('id').where('realm_id', '=', d.realm_id).where('role', '<=', Role.ADMINISTRATOR).where('is_active', '=', true).execute();
    const audience = new Set(admins.map((a) => a.id));
    // A deactivated inviter has nobody left to tell (the real server tells only administrators then).
    if (!d.inviter_deactivated) audience.add(d.invited_by_user_id);
    return { audience, forUser: () => [{ type: 'invites_changed' }] };
  });
}
