import type { FastifyInstance } from 'fastify';
import { defineRoute } from '../route.js';
import {
  acceptInvite, acceptMultiuseInvite, createMultiuseInvite, invitationPath, listInvites, listMultiuseInvites, multiusePath, pendingInvite,
  pendingMultiuseInvite, resendInvite, revokeInvite, revokeMultiuseInvite, sendInvites, type InviteParams, type MultiuseInviteParams,
} from '../../services/invites.js';
import { errors } from '../../domain/errors.js';
import { Role } from '../../domain/roles.js';
import type { UserRow } from '../../read/users.js';
import { mailerFor } from '../../services/mailer.js';
import { escapeHtml } from '../../read/messages.js';
import type { AppServices } from '../services.js';

// Every invitation view of the real server is for human members and administrators only
// (require_member_or_admin), checked before its parameters.
function membersOnly(user: UserRow): void {
  if (user.role === Role.GUEST) throw errors.badRequest('Not allowed for guest users');
  if (user.is_bot) throw errors.badRequest('This endpoint does not accept bot requests.');
}

/** Email invitations and reusable links (under /api/v1). */
export default async function inviteRoutes(app: FastifyInstance, { services }: { services: AppServices }) {
  const { ctx } = services;

  defineRoute(app, {
    method: 'GET',
    url: '/invites',
    allow: membersOnly,
    handler: async ({ user, realm, meta }) => ({
      invites: [...await listInvites(ctx.db, user, meta.now), ...await listMultiuseInvites(ctx.db, user, realm.url, meta.now)],
    }),
  });

  defineRoute<InviteParams>(app, {
    method: 'POST',
    url: '/invites',
    allow: membersOnly,
    params: {
      properties: {
        invitee_emails: { type: 'string' },
        invite_expires_in_minutes: { type: 'integer', nullable: true, minimum: 1 },
        invite_as: { type: 'integer', enum: [100, 200, 300, 400, 600] },
        stream_ids: { type: 'array', items: { type: 'integer' } },
      },
      required: ['invitee_emails', 'stream_ids'],
    },
    handler: async ({ params, user, realm, meta, request }) => {
      await sendInvites(ctx, meta, user, realm, params, mailerFor(ctx.config, request.log));
    },
  });

  defineRoute<MultiuseInviteParams>(app, {
    method: 'POST',
    url: '/invites/multiuse',
    allow: membersOnly,
    params: {
      properties: {
        invite_expires_in_minutes: { type: 'integer', nullable: true, minimum: 1 },
        invite_as: { type: 'integer', enum: [100, 200, 300, 400, 600] },
        stream_ids: { type: 'array', items: { type: 'integer' } },
      },
    },
    handler: async ({ params, user, realm, meta }) => {
      return { invite_link: await createMultiuseInvite(ctx, meta, user, realm, params) };
    },
  });

  defineRoute<{ invite_id: number }>(app, {
    method: 'DELETE',
    url: '/invites/multiuse/:invite_id',
    allow: membersOnly,
    params: { properties: { invite_id: { type: 'integer' } }, required: ['invite_id'] },
    handler: async ({ params, user, meta }) => {
      await revokeMultiuseInvite(ctx, meta, user, params.invite_id);
    },
  });

  defineRoute<{ prereg_id: number }>(app, {
    method: 'DELETE',
    url: '/invites/:prereg_id',
    allow: membersOnly,
    params: { properties: { prereg_id: { type: 'integer' } }, required: ['prereg_id'] },
    handler: async ({ params, user, meta }) => {
      await revokeInvite(ctx, meta, user, params.prereg_id);
    },
  });

  defineRoute<{ prereg_id: number }>(app, {
    method: 'POST',
    url: '/invites/:prereg_id/resend',
    allow: membersOnly,
    params: { properties: { prereg_id: { type: 'integer' } }, required: ['prereg_id'] },
    handler: async ({ params, user, realm, meta, request }) => {
      return { timestamp: await resendInvite(ctx, meta, user, realm, params.prereg_id, mailerFor(ctx.config, request.log)) };
    },
  });
}

const page = (title: string, body: string) =>
  `<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head><body><h1>${escapeHtml(title)}</h1>${body}</body></html>\n`;

const FAILURES = {
  invalid: 'This invitation link is invalid.',
  used: 'This invitation has already been used.',
  expired: 'This invitation has expired.',
  in_use: 'An account with this email address already exists.',
} as const;

/**
 * The invitation link (outside /api/v1; there is no web app): GET shows a form for a name and a
 * password, POST creates the account through the same command as any other user.
 */
export async function invitationConfirmRoutes(app: FastifyInstance, { services }: { services: AppServices }) {
  const { ctx } = services;
  const keyParam = { key: { type: 'string' as const, maxLength: 200 } };

  defineRoute<{ key: string }>(app, {
    method: 'GET',
    url: '/accounts/do_confirm/:key',
    auth: 'none',
    params: { properties: keyParam, required: ['key'] },
    handler: async ({ params, meta, reply }) => {
      const found = await pendingInvite(ctx.db, params.key, meta.now);
      reply.type('text/html; charset=utf-8');
      if (!found.ok) {
        reply.code(404).send(page('Invalid invitation', `<p>${escapeHtml(FAILURES[found.reason])}</p>`));
        return;
      }
      reply.send(page('Create your account', `<form method="post" action="${escapeHtml(invitationPath(params.key))}">
<p>Email: <b>${escapeHtml(found.row.email)}</b></p>
<p><label>Full name <input name="full_name" required maxlength="60"></label></p>
<p><label>Password <input name="password" type="password" required minlength="6"></label></p>
<p><button type="submit">Sign up</button></p></form>`));
    },
  });

  defineRoute<{ key: string; full_name: string; password: string }>(app, {
    method: 'POST',
    url: '/accounts/do_confirm/:key',
    auth: 'none',
    params: { properties: { ...keyParam, full_name: { type: 'string' }, password: { type: 'string', maxLength: 1000 } }, required: ['key', 'full_name', 'password'] },
    handler: async ({ params, meta, reply }) => {
      const outcome = await acceptInvite(ctx, meta, params.key, params.full_name, params.password);
      reply.type('text/html; charset=utf-8');
      if (!outcome.ok) {
        reply.code(404).send(page('Invalid invitation', `<p>${escapeHtml(FAILURES[outcome.reason])}</p>`));
        return;
      }
      reply.send(page('Account created', `<p>Your account <b>${escapeHtml(outcome.email)}</b> is ready: log in with your email address and password.</p>`));
    },
  });

  // A reusable link: the same form, with the address to create the account for.
  defineRoute<{ key: string }>(app, {
    method: 'GET',
    url: '/join/:key/',
    auth: 'none',
    params: { properties: keyParam, required: ['key'] },
    handler: async ({ params, meta, reply }) => {
      const found = await pendingMultiuseInvite(ctx.db, params.key, meta.now);
      reply.type('text/html; charset=utf-8');
      if (!found.ok) {
        reply.code(404).send(page('Invalid invitation', `<p>${escapeHtml(FAILURES[found.reason])}</p>`));
        return;
      }
      reply.send(page('Create your account', `<form method="post" action="${escapeHtml(multiusePath(params.key))}">
<p><label>Email <input name="email" type="email" required maxlength="254"></label></p>
<p><label>Full name <input name="full_name" required maxlength="60"></label></p>
<p><label>Password <input name="password" type="password" required minlength="6"></label></p>
<p><button type="submit">Sign up</button></p></form>`));
    },
  });

  defineRoute<{ key: string; email: string; full_name: string; password: string }>(app, {
    method: 'POST',
    url: '/join/:key/',
    auth: 'none',
    params: {
      properties: { ...keyParam, email: { type: 'string', maxLength: 254 }, full_name: { type: 'string' }, password: { type: 'string', maxLength: 1000 } },
      required: ['key', 'email', 'full_name', 'password'],
    },
    handler: async ({ params, meta, reply }) => {
      const outcome = await acceptMultiuseInvite(ctx, meta, params.key, params.email, params.full_name, params.password);
      reply.type('text/html; charset=utf-8');
      if (!outcome.ok) {
        reply.code(404).send(page('Invalid invitation', `<p>${escapeHtml(FAILURES[outcome.reason])}</p>`));
        return;
      }
      reply.send(page('Account created', `<p>Your account <b>${escapeHtml(outcome.email)}</b> is ready: log in with your email address and password.</p>`));
    },
  });
}
