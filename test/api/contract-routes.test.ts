import t from 'tap';
import { startTestServer, Role } from '../helpers/server.js';
import { operations, type Operation } from '../helpers/openapi.js';

/** Entries of the OpenAPI document that describe the protocol and are not endpoints of this server. */
const DOCUMENTATION_ONLY: Record<string, string> = {
  'POST /real-time': 'describes the event system (GET /events and POST /register), not a route',
  'POST /rest-error-handling': 'describes the common error envelope, not a route',
  'POST /zulip-outgoing-webhook': 'the payload Zulip POSTs to an outgoing-webhook bot, served by the bot, not by Zulip',
};

/**
 * Operations that other branches are building in parallel; the lead empties this list when merging
 * them, so that from then on a missing route fails this test.
 */
export const BUILT_ON_OTHER_BRANCHES: readonly string[] = [
  'GET /realm/presence',
  'GET /users/{user_id_or_email}/presence',
  'POST /users/me/status',
  'GET /scheduled_messages',
  'POST /scheduled_messages',
  'PATCH /scheduled_messages/{scheduled_message_id}',
  'DELETE /scheduled_messages/{scheduled_message_id}',
  'POST /users/me/muted_users/{muted_user_id}',
  'DELETE /users/me/muted_users/{muted_user_id}',
  'GET /messages/{message_id}/read_receipts',
  'GET /invites',
  'POST /invites',
  'PATCH /realm/profile_fields',
  'PATCH /users/me/subscriptions/muted_topics',
  'GET /streams/{stream_id}/email_address',
  'POST /mobile_push/test_notification',
  'GET /calls/bigbluebutton/create',
  'POST /dev_fetch_api_key',
  'GET /user_uploads/{realm_id_str}/{filename}',
];

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
  const s = await startTestServer(t);
  const caller = await s.user(Role.MEMBER, 'Walker');
  const checked = operations
    .filter((op) => !(name(op) in DOCUMENTATION_ONLY) && !BUILT_ON_OTHER_BRANCHES.includes(name(op)))
    // Deactivating the caller goes last.
    .sort((a, b) => Number(name(a) === 'DELETE /users/me') - Number(name(b) === 'DELETE /users/me'));
  t.ok(checked.length > 70, `${checked.length} operations walked`);
  for (const op of checked) {
    const url = concreteUrl(op, caller.email);
    const response = await s.api(op.method, url, caller, PARAMS[name(op)]);
    const missing = response.status === 405 || (response.status === 404 && response.body?.msg === 'Endpoint not found');
    t.notOk(missing, `${name(op)} (${url}) is routed: ${response.status} ${JSON.stringify(response.body).slice(0, 120)}`);
  }
  for (const entry of [...Object.keys(DOCUMENTATION_ONLY), ...BUILT_ON_OTHER_BRANCHES]) {
    t.ok(operations.some((op) => name(op) === entry), `excluded ${entry} is a documented operation`);
  }
});
