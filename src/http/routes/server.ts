import type { FastifyInstance } from 'fastify';
import { defineRoute } from '../route.js';
import { errors } from '../../domain/errors.js';
import { getDefaultRealm, realmHost } from '../../read/realm.js';
import { apiEmail, getUserByEmail } from '../../read/users.js';
import { verifyPassword, generateApiKey } from '../../services/secrets.js';
import { actorOf, changeUser } from '../../services/users.js';
import { ZULIP_FEATURE_LEVEL, ZULIP_MERGE_BASE, ZULIP_VERSION } from '../../version.js';
import type { AppServices } from '../services.js';
import { ORGANIZATION_ICON_PATH } from '../../domain/realm/server-catalogs.js';
import { realmImageUrl } from '../../services/realm-images.js';
import { renderedRealmDescription } from '../../services/realm-description.js';

/** Server information and API key handling. */
export default async function serverRoutes(app: FastifyInstance, { services }: { services: AppServices }) {
  const { ctx } = services;

  defineRoute(app, {
    method: 'GET',
    url: '/server_settings',
    auth: 'none',
    handler: async ({ request }) => {
      const realm = await getDefaultRealm(ctx.db);
      const agent = request.headers['user-agent'] ?? '';
      return {
        authentication_methods: { password: true, dev: false, email: true, ldap: false, github: false, google: false, saml: false },
        zulip_version: ZULIP_VERSION,
        zulip_merge_base: ZULIP_MERGE_BASE,
        zulip_feature_level: ZULIP_FEATURE_LEVEL,
        push_notifications_enabled: false,
        is_incompatible: agent.startsWith('ZulipInvalid'),
        email_auth_enabled: true,
        require_email_format_usernames: true,
        realm_uri: realm?.url ?? ctx.config.externalUrl,
        realm_url: realm?.url ?? ctx.config.externalUrl,
        realm_name: realm?.name ?? ctx.config.realmName,
        realm_icon: realm ? realmImageUrl(realm, 'icon') : `${ctx.config.externalUrl}${ORGANIZATION_ICON_PATH}`,
        realm_description: realm ? await renderedRealmDescription(ctx, realm) : '',
        realm_web_public_access_enabled: false,
        external_authentication_methods: [],
      };
    },
  });

  defineRoute<{ username: string; password: string }>(app, {
    method: 'POST',
    url: '/fetch_api_key',
    auth: 'none',
    params: { properties: { username: { type: 'string' }, password: { type: 'string' } }, required: ['username', 'password'] },
    handler: async ({ params, realm }) => {
      if (!realm) throw errors.authFailed();
      const user = await getUserByEmail(ctx.db, realm.id, params.username, realmHost(realm));
      if (!user || !(await verifyPassword(params.password, user.password_hash))) throw errors.authFailed();
      if (realm.deactivated) throw errors.realmDeactivated();
      if (!user.is_active) throw errors.userDeactivated();
      return { api_key: user.api_key, email: apiEmail(user, realmHost(realm)), user_id: user.id };
    },
  });

  defineRoute(app, {
    method: 'POST',
    url: '/users/me/api_key/regenerate',
    handler: async ({ user, meta }) => {
      const api_key = generateApiKey();
      await changeUser(ctx, meta, user.id, () => ({ type: 'RegenerateApiKey', actor: actorOf(user), api_key }));
      return { api_key };
    },
  });
}
