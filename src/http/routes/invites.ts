import type { FastifyInstance } from 'fastify';
import { defineRoute } from '../route.js';
import { acceptInvite, invitationPath, listInvites, pendingInvite, sendInvites, type InviteParams } from '../../services/invites.js';
import { mailerFor } from '../../services/mailer.js';
import { escapeHtml } from '../../read/messages.js';
import type { AppServices } from '../services.js';

/** GET and POST /invites (under /api/v1). */
export default async function inviteRoutes(app: FastifyInstance, { services }: { services: AppServices }) {
  const { ctx } = services;

  defineRoute(app, {
    method: 'GET',
    url: '/invites',
    handler: async ({ user, meta }) => ({ invites: await listInvites(ctx.db, user, meta.now) }),
  });

  defineRoute<InviteParams>(app, {
    method: 'POST',
    url: '/invites',
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
}
