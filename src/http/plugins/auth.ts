import fp from 'fastify-plugin';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { errors } from '../../domain/errors.js';
import { getUserByEmail, type UserRow } from '../../read/users.js';
import { getDefaultRealm, realmHost, type RealmRow } from '../../read/realm.js';
import { constantTimeEqual } from '../../services/secrets.js';
import type { ServiceContext } from '../../services/context.js';
import { hasWebPublicStreams } from '../../read/channels.js';
import { spectatorAccessEnabled } from '../../visibility.js';

declare module 'fastify' {
  interface FastifyRequest {
    user: UserRow | null;
    realmRow: RealmRow | null;
  }
  interface FastifyInstance {
    /** Checks the request's HTTP Basic credentials and sets request.user, or throws the refusal. */
    authenticate(request: FastifyRequest): Promise<void>;
    /** The organization a spectator's request reads, once it admits spectators; otherwise throws the refusal. */
    admitSpectator(request: FastifyRequest): Promise<RealmRow>;
  }
  interface FastifyContextConfig {
    /**
     * 'optional': credentials are checked when presented; the handler decides whether a user is needed.
     * 'spectator': a /json route, whose requests are spectators' (no session exists): credentials are never read.
     */
    auth?: 'user' | 'none' | 'optional' | 'spectator';
    /** An /api/v1 route that also admits spectators under /json (RouteSpec.spectator). */
    spectators?: boolean;
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

const REALM_TABLES = ['realms'];
const USER_TABLES = ['users', 'realms'];
const MAX_CACHED_USERS = 50_000;

/** HTTP Basic `email:api_key` for every route that asks for a user. */
async function authPlugin(app: FastifyInstance, opts: { ctx: ServiceContext }): Promise<void> {
  app.decorateRequest('user', null);
  app.decorateRequest('realmRow', null);
  // Realm and user rows change only through events: shared copies, valid while their read tables
  // have not changed, save two queries per request and memory per blocked long-poll.
  let cachedRealm: { version: number; realm: RealmRow } | undefined;
  const currentRealm = async (): Promise<RealmRow | undefined> => {
    const version = opts.ctx.tablesVersion(REALM_TABLES);
    if (cachedRealm && cachedRealm.version === version) return cachedRealm.realm;
    const realm = await getDefaultRealm(opts.ctx.db);
    if (realm) cachedRealm = { version, realm };
    return realm;
  };
  // A cached row only ever lets a request in: every refusal is checked against the table, so a
  // key regenerated or an account reactivated through another node works here at once.
  let usersVersion = -1;
  const usersByEmail = new Map<string, UserRow>();
  const userByEmail = async (realm: RealmRow, email: string, fresh: boolean): Promise<UserRow | undefined> => {
    const version = opts.ctx.tablesVersion(USER_TABLES);
    if (version !== usersVersion || usersByEmail.size >= MAX_CACHED_USERS) {
      usersByEmail.clear();
      usersVersion = version;
    }
    const key = `${realm.id}:${email.toLowerCase()}`;
    const hit = fresh ? undefined : usersByEmail.get(key);
    if (hit) return hit;
    const user = await getUserByEmail(opts.ctx.db, realm.id, email, realmHost(realm));
    if (user && opts.ctx.tablesVersion(USER_TABLES) === version) usersByEmail.set(key, Object.freeze(user));
    return user;
  };
  const accepts = (user: UserRow | undefined, apiKey: string): user is UserRow =>
    user !== undefined && constantTimeEqual(user.api_key, apiKey) && user.is_active;
  const authenticate = async (request: FastifyRequest): Promise<void> => {
    const realm = request.realmRow ?? undefined;
    const credentials = basicCredentials(request);
    if (!credentials) throw errors.unauthorized();
    if (!realm) throw errors.invalidApiKey();
    if (credentials.key.length !== 32) throw errorsMalformedKey();
    let user = await userByEmail(realm, credentials.email, false);
    if (!accepts(user, credentials.key)) user = await userByEmail(realm, credentials.email, true);
    if (!user || !constantTimeEqual(user.api_key, credentials.key)) throw errors.invalidApiKey();
    if (realm.deactivated) throw errors.realmDeactivated();
    if (!user.is_active) throw errors.userDeactivated();
    request.user = user;
  };
  app.decorate('authenticate', authenticate);
  // As the real server's views ask before answering a spectator: an organization at this address,
  // active (our choice: the real server's API does not check; its web app shows a deactivated one
  // to nobody), with web-public access on and a web-public channel to read.
  app.decorate('admitSpectator', async (request: FastifyRequest): Promise<RealmRow> => {
    const realm = request.realmRow;
    if (!realm) throw errors.invalidSubdomain();
    if (realm.deactivated) throw errors.realmDeactivated();
    const admitted = spectatorAccessEnabled(realm, opts.ctx.config.webPublicStreamsEnabled ?? false) && (await hasWebPublicStreams(opts.ctx.db, realm.id));
    if (!admitted) throw errors.notLoggedInSession();
    return realm;
  });
  app.addHook('onRequest', async (request) => {
    const realm = await currentRealm();
    request.realmRow = realm ?? null;
    const auth = request.routeOptions.config?.auth;
    if (auth === 'user' || (auth === 'optional' && request.headers.authorization !== undefined)) await authenticate(request);
  });
}

function errorsMalformedKey() {
  const error = errors.invalidApiKey();
  return Object.assign(error, { message: 'Malformed API key' });
}

export default fp(authPlugin, { name: 'auth' });
