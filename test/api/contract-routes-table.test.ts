import t from 'tap';
import { readFileSync } from 'node:fs';
import { startTestServer, Role } from '../helpers/server.js';
import { findReference } from '../helpers/repo-root.js';

/**
 * Every `api` and `other` route of the real server's URL table (../shared/reference/zulip-routes.tsv)
 * exists here: none answers "Endpoint not found" or 405.
 */

interface RouteRow {
  method: string;
  path: string;
  documented: boolean;
  scope: string;
}

const rows: RouteRow[] = readFileSync(findReference('zulip-routes.tsv'), 'utf8')
  .split('\n')
  .filter((line) => line.trim() !== '' && !line.startsWith('#'))
  .map((line) => line.split('\t'))
  .filter((cells) => cells[0] !== 'method')
  .map(([method, path, documented, scope]) => ({ method, path, documented: documented === 'yes', scope }));

/** Routes of the table this server deliberately does not serve, each with its reason. */
const EXCLUDED: Record<string, string> = {
  'POST /json/fetch_api_key': "the web app's own login form (scope web-only): clients use POST /fetch_api_key",
  'GET /json/self-hosted-billing': "the web app's billing page for self-hosted plans (scope web-only): no billing here",
};

/**
 * Routes of the table not built yet on this branch, each with its reason. The test checks that they
 * are still missing, so whoever builds one must take it off this list.
 */
const NOT_YET_BUILT: Record<string, string> = {};

/** Parameters some calls need to answer at once (a GET /events without dont_block would long-poll). */
const PARAMS: Record<string, Record<string, unknown>> = { 'GET /events': { dont_block: true } };

/** Calls that would end the caller's session or organization go last, in this order. */
const LAST = ['DELETE /users/me', 'POST /realm/deactivate'];

const key = (row: RouteRow) => `${row.method} ${row.path}`;

function concreteUrl(path: string, email: string): string {
  return path.replace(/\{(\w+)\}/g, (_, param: string) => {
    if (param === 'email' || param === 'user_id_or_email' || param === 'email_or_id') return encodeURIComponent(email);
    if (param.endsWith('_id') || param === 'id') return '1';
    if (param === 'filename') return 'file.png';
    if (param === 'realm_id_str') return '1';
    if (param === 'domain') return 'example.org';
    return 'green_tick';
  });
}

t.test('the table is read', async (t) => {
  t.ok(rows.length > 150, `${rows.length} routes in the table`);
  for (const entry of [...Object.keys(EXCLUDED), ...Object.keys(NOT_YET_BUILT)]) {
    t.ok(rows.some((row) => key(row) === entry), `listed ${entry} is a route of the table`);
  }
  for (const entry of Object.keys(EXCLUDED)) {
    t.equal(rows.find((row) => key(row) === entry)?.scope, 'web-only', `excluded ${entry} is a web-only route`);
  }
});

t.test('every api and other route of the real server is routed', async (t) => {
  const s = await startTestServer(t, { development: true });
  const caller = await s.user(Role.MEMBER, 'Walker');
  const checked = rows
    .filter((row) => row.scope === 'api' || row.scope === 'other')
    .filter((row) => !(key(row) in EXCLUDED))
    .sort((a, b) => LAST.indexOf(key(a)) - LAST.indexOf(key(b)));
  t.ok(checked.length > 120, `${checked.length} routes walked`);
  const missing: string[] = [];
  for (const row of checked) {
    // The organization's deactivation needs its owner; everything else is called as a plain member.
    const as = key(row) === 'POST /realm/deactivate' ? s.owner : caller;
    const url = concreteUrl(row.path, as.email);
    let status: number;
    let body: any;
    if (row.scope === 'api') {
      ({ status, body } = await s.api(row.method, url, as, PARAMS[key(row)]));
    } else {
      const response = await s.fastify.inject({ method: row.method as 'GET', url, headers: { authorization: as.auth } });
      status = response.statusCode;
      try {
        body = response.json();
      } catch {
        body = response.body;
      }
    }
    const absent = status === 405 || (status === 404 && body?.msg === 'Endpoint not found');
    if (key(row) in NOT_YET_BUILT) {
      t.ok(absent, `${key(row)} is listed as not built yet (${NOT_YET_BUILT[key(row)]}) and is indeed missing: take it off the list once built`);
      continue;
    }
    if (absent) missing.push(key(row));
    t.notOk(absent, `${key(row)} (${url}) is routed: ${status} ${JSON.stringify(body).slice(0, 120)}`);
  }
  t.same(missing, [], 'no route of the table is missing');
});
