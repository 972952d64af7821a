import fp from 'fastify-plugin';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { errors } from '../../domain/errors.js';
import { getUserByEmail, type UserRow } from '../../read/users.js';
import { getDefaultRealm, realmHost, type RealmRow } from '../../read/realm.js';
import { constantTimeEqual } from '../../services/secrets.js';
import type { ServiceContext } from '../../services/context.js';

declare module 'fastify' {
  interface FastifyRequest {
    user: UserRow | null;
    realmRow: RealmRow | null;
  }
  interface FastifyContextConfig {
    auth?: 'user' | 'none';
    limited?: boolean;
  }
}

function basicCredentials(request: FastifyRequest): { email: string; key: string } | undefined {
  const header = request.headers.authorization;
  if (!header) return undefined;
  const match = /^Basic\s+(.+)$/i.exec(header.trim());
  if (!match) return undefined;
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  return { email: decoded.slice(0, colon), key: decoded.slice(colon + 1) };
}

/** HTTP Basic `email:api_key` for every route that asks for a user. */
async function authPlugin(app: FastifyInstance, opts: { ctx: ServiceContext }): Promise<void> {
  app.decorateRequest('user', null);
  app.decorateRequest('realmRow', null);
  // The realm row changes only through events: one shared copy per projected position saves a
  // query per request and memory per blocked long-poll.
  let cached: { position: number; realm: RealmRow } | undefined;
  const currentRealm = async (): Promise<RealmRow | undefined> => {
    const position = opts.ctx.projectedPosition();
    if (cached && cached.position === position) return cached.realm;
    const realm = await getDefaultRealm(opts.ctx.db);
    if (realm) cached = { position, realm };
    return realm;
  };
  app.addHook('onRequest', async (request) => {
    const realm = await currentRealm();
    request.realmRow = realm ?? null;
    const auth = request.routeOptions.config?.auth;
    if (auth !== 'user') return;
    const credentials = basicCredentials(request);
    if (!credentials) throw errors.unauthorized();
    if (!realm) throw errors.invalidApiKey();
    if (credentials.key.length !== 32) throw errorsMalformedKey();
    const user = await getUserByEmail(opts.ctx.db, realm.id, credentials.email, realmHost(realm));
    if (!user || !constantTimeEqual(user.api_key, credentials.key)) throw errors.invalidApiKey();
    if (!user.is_active) throw errors.userDeactivated();
    request.user = user;
  });
}

function errorsMalformedKey() {
  const error = errors.invalidApiKey();
  return Object.assign(error, { message: 'Malformed API key' });
}

export default fp(authPlugin, { name: 'auth' });
