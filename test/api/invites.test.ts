import t from 'tap';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startTestServer, Role, encodeParams, type TestServer } from '../helpers/server.js';
import { verifyAction } from '../helpers/verify-action.js';
import { createChannel } from '../helpers/typing-fixture.js';
import { setRealmProperties } from '../helpers/realm.js';

async function mailTo(dataDir: string, to: string): Promise<string> {
  const dir = path.join(dataDir, 'emails');
  const texts = await Promise.all((await readdir(dir)).sort().map((f) => readFile(path.join(dir, f), 'utf8')));
  const found = texts.reverse().find((text) => text.includes(`To: ${to}\n`));
  if (!found) throw new Error(`no mail to ${to}`);
  return found;
}

const linkPath = (mail: string) => new URL(/https?:\/\/\S+\/accounts\/do_confirm\/\S+/.exec(mail)![0]).pathname;

async function page(s: TestServer, method: 'GET' | 'POST', url: string, form?: Record<string, unknown>) {
  const r = await s.fastify.inject({ method, url, headers: form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}, payload: form ? encodeParams(form) : undefined });
  return { status: r.statusCode, body: r.body };
}

t.test('invitations: send, list, accept', async (t) => {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'invites-test-'));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  const s = await startTestServer(t, { dataDir });
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const guest = await s.user(Role.GUEST, 'Guest');
  const channel = await createChannel(s, alice, 'welcome', { subscribers: [alice.id] });

  const sent = await verifyAction(t, s, admin, () => s.api('POST', '/invites', alice, { invitee_emails: 'new1@example.com, new2@example.com', stream_ids: [channel] }), {
    register: { event_types: ['invites_changed'] },
  });
  t.same(sent.map((e) => e.type), ['invites_changed'], 'administrators hear of it, once for the whole request (as the real server)');
  const aliceList = await s.api('GET', '/invites', alice);
  t.equal(aliceList.status, 200);
  t.same(aliceList.body.invites.map((i: any) => [i.email, i.invited_by_user_id, i.invited_as, i.is_multiuse]),
    [['new1@example.com', alice.id, 400, false], ['new2@example.com', alice.id, 400, false]]);
  const first = aliceList.body.invites[0];
  t.equal(first.expiry_date - first.invited, 10 * 24 * 3600, 'ten days by default');
  t.equal((await s.api('GET', '/invites', admin)).body.invites.length, 2, 'administrators see everyone\'s');
  t.same((await s.api('GET', '/invites', bob)).body.invites, [], 'members see their own');

  const mail = await mailTo(dataDir, 'new1@example.com');
  t.match(mail, /Subject: Alice invited you to join/);
  const link = linkPath(mail);
  // The administrator invites new1 too: once new1 has an account, that invitation is gone as well.
  t.equal((await s.api('POST', '/invites', admin, { invitee_emails: 'new1@example.com', stream_ids: [] })).status, 200);
  t.equal((await s.api('GET', '/invites', admin)).body.invites.filter((i: any) => i.email === 'new1@example.com').length, 2);
  t.equal((await page(s, 'GET', link)).status, 200, 'the link shows the sign-up form');
  t.equal((await page(s, 'POST', link, { full_name: 'New One', password: '123' })).status, 400, 'a too short password');
  const created = await page(s, 'POST', link, { full_name: 'New One', password: 'correct horse' });
  t.equal(created.status, 200, created.body);
  const login = await s.api('POST', '/fetch_api_key', null, { username: 'new1@example.com', password: 'correct horse' });
  t.equal(login.status, 200, 'the account exists with that password');
  const newUser = { id: login.body.user_id, email: 'new1@example.com', apiKey: login.body.api_key, auth: `Basic ${Buffer.from(`new1@example.com:${login.body.api_key}`).toString('base64')}` };
  const subs = await s.api('GET', '/users/me/subscriptions', newUser);
  t.same(subs.body.subscriptions.map((x: any) => x.stream_id), [channel], 'subscribed to the invited channels');
  t.equal((await page(s, 'POST', link, { full_name: 'Again', password: 'correct horse' })).status, 404, 'a link works once');
  t.same((await s.api('GET', '/invites', alice)).body.invites.map((i: any) => i.email), ['new2@example.com'], 'accepted ones are no longer pending');
  t.same((await s.api('GET', '/invites', admin)).body.invites.map((i: any) => i.email), ['new2@example.com'], 'nor the other invitations to the same address (the real server revokes them)');
  t.equal((await page(s, 'GET', '/accounts/do_confirm/not-a-real-key-aaaaaaaaaaaa')).status, 404);

  // Errors, worded as the real server's.
  const mixed = await s.api('POST', '/invites', alice, { invitee_emails: `${bob.email}\nnew3@example.com`, stream_ids: [] });
  t.same(mixed.body, {
    result: 'error', code: 'INVITATION_FAILED',
    msg: "Some of those addresses are already using Zulip, so we didn't send them an invitation. We did send invitations to everyone else!",
    errors: [[bob.email, 'Already has an account.', false]], sent_invitations: true, license_limit_reached: false, daily_limit_reached: false,
  });
  const none = await s.api('POST', '/invites', alice, { invitee_emails: bob.email, stream_ids: [] });
  t.same([none.body.msg, none.body.sent_invitations], ["We weren't able to invite anyone.", false]);
  const invalid = await s.api('POST', '/invites', alice, { invitee_emails: 'ok@example.com, not-an-address', stream_ids: [] });
  t.same([invalid.body.msg, invalid.body.errors], ["Some emails did not validate, so we didn't send any invitations.", [['not-an-address', 'Invalid address.', false]]]);
  const invalidAndTaken = await s.api('POST', '/invites', alice, { invitee_emails: `not-an-address, ${bob.email}`, stream_ids: [] });
  t.same(invalidAndTaken.body.errors, [['not-an-address', 'Invalid address.', false], [bob.email, 'Already has an account.', false]], 'the addresses already in use are listed too');
  t.equal((await s.api('POST', '/invites', alice, { invitee_emails: 'New Four <new4@example.com>', stream_ids: [] })).status, 200);
  t.ok((await s.api('GET', '/invites', alice)).body.invites.some((i: any) => i.email === 'new4@example.com'), '"Name <address>" invites the address');
  t.equal((await s.api('POST', '/invites', alice, { invitee_emails: '', stream_ids: [] })).body.msg, 'You must specify at least one email address.');
  // As the real server: only an empty parameter is refused; blank addresses are skipped, nothing sent.
  const blank = await s.api('POST', '/invites', alice, { invitee_emails: ' , ', stream_ids: [] });
  t.same([blank.status, blank.body.result], [200, 'success']);
  t.equal((await s.api('POST', '/invites', alice, { invitee_emails: 'x@example.com', stream_ids: [999999] })).body.msg, 'Stream does not exist with id: 999999. No invites were sent.');
  t.equal((await s.api('POST', '/invites', alice, { invitee_emails: 'x@example.com', stream_ids: [], invite_as: 200 })).body.msg, 'Must be an organization administrator');
  t.equal((await s.api('POST', '/invites', admin, { invitee_emails: 'x@example.com', stream_ids: [], invite_as: 100 })).body.msg, 'Must be an organization owner');
  // Guests and bots are refused by every invitation endpoint, before their parameters are read.
  for (const [method, url] of [['POST', '/invites'], ['GET', '/invites'], ['POST', '/invites/multiuse'], ['DELETE', '/invites/1'], ['POST', '/invites/1/resend']] as const) {
    t.equal((await s.api(method, url, guest, {})).body.msg, 'Not allowed for guest users', `${method} ${url}: guest`);
  }
  const bot = await s.user(Role.MEMBER, 'Invite Bot', { bot_type: 1, bot_owner_id: alice.id });
  t.equal((await s.api('POST', '/invites', bot, { invitee_emails: 'x@example.com', stream_ids: [] })).body.msg, 'This endpoint does not accept bot requests.');
  const moderator = await s.user(Role.MODERATOR, 'Mod');
  t.equal((await s.api('POST', '/invites', moderator, { invitee_emails: 'x@example.com', stream_ids: [], invite_as: 300 })).body.msg, 'Must be an organization administrator', 'moderators are invited by administrators only');
  t.equal((await s.api('POST', '/invites', alice, { invitee_emails: 'x@example.com' })).body.code, 'REQUEST_VARIABLE_MISSING');
  // An organization anyone may join: a new account may not invite (an administrator's may).
  await setRealmProperties(s, { invite_required: false });
  const tooNew = await s.api('POST', '/invites', alice, { invitee_emails: 'x@example.com', stream_ids: [] });
  t.same([tooNew.status, tooNew.body.code, tooNew.body.msg, tooNew.body.errors], [400, 'INVITATION_FAILED',
    'Your account is too new to send invites for this organization. Ask an organization admin, or a more experienced user.', []]);
  t.equal((await s.api('POST', '/invites', admin, { invitee_emails: 'fresh-admin@example.com', stream_ids: [] })).status, 200);
  await setRealmProperties(s, { invite_required: true });
  await setRealmProperties(s, { invite_to_realm_policy: 2 });
  t.equal((await s.api('POST', '/invites', alice, { invitee_emails: 'x@example.com', stream_ids: [] })).body.msg, 'Insufficient permission', 'administrators only');
  t.equal((await s.api('POST', '/invites', admin, { invitee_emails: 'adm@example.com', stream_ids: [], invite_as: 200, invite_expires_in_minutes: null })).status, 200);
  const never = (await s.api('GET', '/invites', admin)).body.invites.find((i: any) => i.email === 'adm@example.com');
  t.same([never.expiry_date, never.invited_as], [null, 200], 'a never-expiring administrator invitation');
  await setRealmProperties(s, { invite_to_stream_policy: 2, invite_to_realm_policy: 1 });
  t.equal((await s.api('POST', '/invites', alice, { invitee_emails: 'y@example.com', stream_ids: [channel] })).body.msg, 'You do not have permission to subscribe other users to streams.');
});
