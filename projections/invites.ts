import { defineProjection } from './define.js';

export const invitesProjection = defineProjection({
  name: 'invites',
  version: 3,
  tables: ['invites', 'multiuse_invites'],
  handlers: {
    InvitationSent: async (trx, d) => {
      await trx
        .insertInto('invites')
        .values({
          id: d.invite_id, realm_id: d.realm_id, email: d.email, invited_by_user_id: d.invited_by_user_id, invited_as: d.invited_as,
          stream_ids: JSON.stringify(d.stream_ids), invited: d.invited, expiry_date: d.expiry_date, key_hash: d.key_hash,
        })
        .onConflict((oc) => oc.column('id').doNothing())
        .execute();
    },
    InvitationAccepted: async (trx, d) => {
      // The address goes with the invitation's key (src/services/invites.ts): the account holds it now.
      await trx.updateTable('invites').set({ accepted_user_id: d.user_id, email: '' }).where('id', '=', d.invite_id).execute();
    },
    // A revoked email invitation is gone: its link no longer finds it, and no listing shows it.
    InvitationRevoked: async (trx, d) => {
      await trx.deleteFrom('invites').where('id', '=', d.invite_id).execute();
    },
    InvitationResent: async (trx, d) => {
      await trx.updateTable('invites').set({ invited: d.invited, key_hash: d.key_hash }).where('id', '=', d.invite_id).execute();
    },
    MultiuseInviteCreated: async (trx, d) => {
      await trx
        .insertInto('multiuse_invites')
        .values({
          id: d.invite_id, realm_id: d.realm_id, invited_by_user_id: d.invited_by_user_id, invited_as: d.invited_as,
          stream_ids: JSON.stringify(d.stream_ids), invited: d.invited, expiry_date: d.expiry_date, key: d.key,
        })
        .onConflict((oc) => oc.column('id').doNothing())
        .execute();
    },
    MultiuseInviteRevoked: async (trx, d) => {
      await trx.updateTable('multiuse_invites').set({ revoked: true }).where('id', '=', d.invite_id).execute();
    },
  },
});
