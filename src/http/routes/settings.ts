import type { FastifyInstance } from 'fastify';
import { defineRoute } from '../route.js';
import type { ParamSchema } from '../params.js';
import { NOT_IN_REALM_DEFAULTS, SETTING_SPECS } from '../../domain/settings/catalog.js';
import { SETTING_NAMES } from '../../domain/settings/defaults.js';
import { changeOwnSettings, changeRealmUserSettingsDefaults } from '../../services/settings.js';
import { confirmEmailChange } from '../../services/email-change.js';
import { mailerFor } from '../../services/mailer.js';
import type { AppServices } from '../services.js';
import { errors } from '../../domain/errors.js';
import { isAdminRole } from '../../domain/roles.js';

/** Every personal setting as a route parameter, typed and bounded as the catalog says. */
const settingParams: Record<string, ParamSchema> = Object.fromEntries(
  SETTING_NAMES.map((name) => [name, { ...SETTING_SPECS[name] } as ParamSchema]),
);
const realmDefaultParams = Object.fromEntries(Object.entries(settingParams).filter(([name]) => !NOT_IN_REALM_DEFAULTS.has(name)));

type SettingsParams = Record<string, unknown> & {
  full_name?: string;
  email?: string;
  old_password?: string;
  new_password?: string;
  timezone?: string;
};

function onlySettings(params: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const name of SETTING_NAMES) if (params[name] !== undefined) out[name] = params[name];
  return out;
}

export default async function settingsRoutes(app: FastifyInstance, { services }: { services: AppServices }) {
  const { ctx } = services;

  // The two older endpoints are aliases of PATCH /settings since feature level 80.
  for (const url of ['/settings', '/settings/display', '/settings/notifications']) {
    defineRoute<SettingsParams>(app, {
      method: 'PATCH',
      url,
      params: {
        properties: {
          ...settingParams,
          full_name: { type: 'string' },
          email: { type: 'string' },
          old_password: { type: 'string' },
          new_password: { type: 'string' },
          timezone: { type: 'string' },
        },
      },
      handler: async ({ params, user, realm, meta, request }) => {
        await changeOwnSettings(ctx, meta, user, realm, {
          settings: onlySettings(params),
          full_name: params.full_name,
          email: params.email,
          timezone: params.timezone,
          old_password: params.old_password,
          new_password: params.new_password,
        }, mailerFor(ctx.config, request.log));
        return {};
      },
    });
  }

  defineRoute<Record<string, unknown>>(app, {
    method: 'PATCH',
    url: '/realm/user_settings_defaults',
    // Administrators only, refused before any parameter is read, as the real server's decorator does.
    allow: (user) => {
      if (!isAdminRole(user.role)) throw errors.mustBeAdmin();
    },
    params: { properties: realmDefaultParams },
    handler: async ({ params, user, meta }) => {
      await changeRealmUserSettingsDefaults(ctx, meta, user, onlySettings(params));
      return {};
    },
  });
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function page(title: string, body: string): string {
  return `<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head>` +
    `<body><h1>${escapeHtml(title)}</h1><p>${body}</p></body></html>\n`;
}

const FAILURES = {
  invalid: 'This confirmation link is invalid or no longer applies.',
  used: 'This confirmation link has already been used.',
  expired: 'This confirmation link has expired.',
  in_use: 'The new email address is already in use by another account.',
} as const;

/**
 * The link in the confirmation mail, outside /api/v1 like the real server's; registered from
 * app.ts. Following it is what changes the address.
 */
export async function emailConfirmationRoutes(app: FastifyInstance, { services }: { services: AppServices }) {
  const { ctx } = services;
  defineRoute<{ key: string }>(app, {
    method: 'GET',
    url: '/accounts/confirm_new_email/:key',
    auth: 'none',
    params: { properties: { key: { type: 'string', maxLength: 200 } }, required: ['key'] },
    handler: async ({ params, realm, meta, reply, request }) => {
      const outcome = await confirmEmailChange(ctx, meta, params.key, mailerFor(ctx.config, request.log), realm);
      reply.type('text/html; charset=utf-8');
      if (!outcome.ok) {
        reply.code(404).send(page('Invalid confirmation link', escapeHtml(FAILURES[outcome.reason])));
        return;
      }
      reply.send(page('Email address changed', `The email address for your account is now <b>${escapeHtml(outcome.new_email)}</b>.`));
    },
  });
}
