import t from 'tap';
import { startTestServer, Role } from '../helpers/server.js';
import { operations, type Operation } from '../helpers/openapi.js';

/** Entries of the OpenAPI document that describe the protocol and are not endpoints of this server. */
const DOCUMENTATION_ONLY: Record<string, string> = {
  'POST /real-time': 'describes the event system (GET /events and POST /register), not a route',
  'POST /rest-error-handling': 'describes the common error envelope, not a route',
  'POST /zulip-outgoing-webhook': 'the payload Zulip POSTs to an outgoing-webhook bot, served by the bot, not by Zulip',
};

/** Parameters some calls need to answer at once (a GET /events without dont_block would long-poll). */
const PARAMS: Record<string, Record<string, unknown>> = { 'GET /events': { dont_block: true } };

const name = (op: Operation) => `${op.method} ${op.path}`;

function concreteUrl(op: Operation, email: string): string {
  return op.path.replace(/\{(\w+)\}/g, (_, param: string) => {
    if (param === 'email' || param === 'user_id_or_email') return encodeURIComponent(email);
    if (param.endsWith('_id')) return '1';
    if (param === 'filename') return 'file.png';
    if (param === 'realm_id_str') return '1';
    return 'green_tick';
  });
}

t.test('every documented operation has a route', async (t) => {
  // Development mode on: POST /dev_fetch_api_key exists only there, as on the real server.
  const s = await startTestServer(t, { development: true });
  const caller = await s.user(Role.MEMBER, 'Walker');
  const checked = operations
    .filter((op) => !(name(op) in DOCUMENTATION_ONLY))
    // Deactivating the caller goes last.
    .sort((a, b) => Number(name(a) === 'DELETE /users/me') - Number(name(b) === 'DELETE /users/me'));
  t.ok(checked.length > 70, `${checked.length} operations walked`);
  for (const op of checked) {
    const url = concreteUrl(op, caller.email);
    const response = await s.api(op.method, url, caller, PARAMS[name(op)]);
    const missing = response.status === 405 || (response.status === 404 && response.body?.msg === 'Endpoint not found');
    t.notOk(missing, `${name(op)} (${url}) is routed: ${response.status} ${JSON.stringify(response.body).slice(0, 120)}`);
  }
  for (const entry of Object.keys(DOCUMENTATION_ONLY)) {
    t.ok(operations.some((op) => name(op) === entry), `excluded ${entry} is a documented operation`);
  }
});
