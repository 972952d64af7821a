import type { Test } from 'tap';
import type { Config } from '../../src/config.js';
import { testConfig } from './config.js';
import { buildServer, type ServerInstance } from '../../src/build-server.js';
import type { OrganizationSetup } from '../../src/services/bootstrap.js';
import { allProjections } from '../../projections/index.js';
import type { Projection } from '../../src/projections-api.js';
import { createUser } from '../../src/services/users.js';
import { Role } from '../../src/domain/roles.js';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { checkDocumentedResponse } from './response-contract.js';

export { Role };

export { testConfig };

export interface TestUser {
  id: number;
  email: string;
  apiKey: string;
  auth: string;
}

export interface TestServer extends ServerInstance {
  owner: TestUser;
  /** Creates a user with the given role and returns its credentials. */
  user(role?: number, name?: string, extra?: { bot_type?: number; bot_owner_id?: number }): Promise<TestUser>;
  /** Calls the API as `as` (or unauthenticated) with form-encoded parameters; objects are JSON-encoded. */
  api(method: string, path: string, as: TestUser | null, params?: Record<string, unknown>): Promise<{ status: number; body: any; headers: Record<string, unknown> }>;
}

export function basicAuth(email: string, key: string): string {
  return `Basic ${Buffer.from(`${email}:${key}`).toString('base64')}`;
}

export function encodeParams(params: Record<string, unknown>): string {
  const form = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value === undefined) continue;
    form.append(key, typeof value === 'string' ? value : JSON.stringify(value));
  }
  return form.toString();
}

let counter = 0;

/**
 * `organization: 'full'` starts as `npm start` does (channels, system bots, welcome messages);
 * `projections`: the read tables to keep (default: all of them).
 */
/** The User-Agent of TestServer.api's requests: an app's, as the real server's test suite counts as one. */
export const TEST_CLIENT = 'ZulipMobile/27.0 (test suite)';

export async function startTestServer(t: Test, overrides: Partial<Config> = {}, options: { organization?: OrganizationSetup; projections?: readonly Projection[] } = {}): Promise<TestServer> {
  const config = await testConfig(overrides);
  const server = await buildServer(config, { projections: options.projections ?? allProjections, inMemory: !config.databaseUrl, organization: options.organization });
  t.teardown(() => server.close());
  const ownerRow = await server.platform.db.selectFrom('users').selectAll().where('role', '=', Role.OWNER).executeTakeFirstOrThrow();
  const owner = { id: ownerRow.id, email: ownerRow.delivery_email, apiKey: ownerRow.api_key, auth: basicAuth(ownerRow.delivery_email, ownerRow.api_key) };
  const testServer: TestServer = Object.assign(server, {
    owner,
    async user(role = Role.MEMBER, name?: string, extra: { bot_type?: number; bot_owner_id?: number } = {}) {
      counter += 1;
      const email = `${name ?? 'user'}${counter}@example.com`.toLowerCase().replace(/\s+/g, '');
      const meta = { actorId: owner.id, realmId: 1, client: 'test', requestId: randomUUID(), now: new Date() };
      const created = await createUser(server.platform, meta, { email, full_name: name ?? `User ${counter}`, role, ...extra });
      return { id: created.user_id, email, apiKey: created.api_key, auth: basicAuth(email, created.api_key) };
    },
    async api(method: string, path: string, as: TestUser | null, params: Record<string, unknown> = {}) {
      const encoded = encodeParams(params);
      const isQuery = method === 'GET';
      const url = `/api/v1${path}${isQuery && encoded ? `?${encoded}` : ''}`;
      // Tests act as a person in a Zulip app (TEST_CLIENT), whose own messages arrive read.
      const headers: Record<string, string> = { 'user-agent': TEST_CLIENT };
      if (as) headers.authorization = as.auth;
      if (!isQuery) headers['content-type'] = 'application/x-www-form-urlencoded';
      const response = await server.fastify.inject({ method: method as 'GET', url, headers, payload: isQuery ? undefined : encoded });
      let body: unknown;
      try {
        body = response.json();
      } catch {
        body = response.body;
      }
      const problem = checkDocumentedResponse(method, `${path}${isQuery && encoded ? `?${encoded}` : ''}`, response.statusCode, body);
      if (problem) t.fail(`${method} ${path} answered ${response.statusCode} outside its documented schema: ${problem}`, { body });
      return { status: response.statusCode, body, headers: response.headers as Record<string, unknown> };
    },
  });
  return testServer;
}

export { sql };
