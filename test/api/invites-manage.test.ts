import t from 'tap';
import type { Test } from 'tap';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startTestServer, Role, encodeParams, basicAuth, type TestServer } from '../helpers/server.js';
import { verifyAction } from '../helpers/verify-action.js';
import { createChannel } from '../helpers/typing-fixture.js';

async function mailsTo(dataDir: string, to: string): Promise<string[]> {
  const dir = path.join(dataDir, 'emails');
  const texts = await Promise.all((await readdir(dir)).sort().map((f) => readFile(path.join(dir, f), 'utf8')));
  return texts.filter((text) => text.includes(`To: ${to}\n`));
}

const linkPath = (mail: string) => new URL(/https?:\/\/\S+\/accounts\/do_confirm\/\S+/.exec(mail)![0]).pathname;

async function page(s: TestServer, method: 'GET' | 'POST', url: string, form?: Record<string, unknown>) {
  const r = await s.fastify.inject({ method, url, headers: form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}, payload: form ? encodeParams(form) : undefined });
  return { status: r.statusCode, body: r.body };
}

/** A test server whose mails are kept in a data directory of its own, removed after the test. */
async function serverWithMailbox(t: Test, prefix: string): Promise<{ s: TestServer; dataDir: string }> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), prefix));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  return { s: await startTestServer(t, { dataDir }), dataDir };
}

const register = { event_types: ['invites_changed'] };

t.test('email invitations: revoke and resend', async (t) => {
  const { s, dataDir } = await serverWithMailbox(t, 'invites-manage-');
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  const alice = await s.user(Role.MEMBER, 'Alice');
  const bob = await s.user(Role.MEMBER, 'Bob');
  const guest = await s.user(Role.GUEST, 'Guest');

  t.equal((await s.api('POST', '/invites', alice, { invitee_emails: 'one@example.com, two@example.com', stream_ids: [] })).status, 200);
  const [one, two] = (await s.api('GET', '/invites', alice)).body.invites;

  // Resend: a new mail with a new link; the old link stops working; the invitation time moves.
  const firstLink = linkPath((await mailsTo(dataDir, 'one@example.com'))[0]!);
  const events = await verifyAction(t, s, admin, async () => {
    const resent = await s.api('POST', `/invites/${one.id}/resend`, alice);
    t.equal(resent.status, 200, JSON.stringify(resent.body));
    t.type(resent.body.timestamp, 'number');
    t.ok(resent.body.timestamp >= one.invited);
  }, { register });
  t.same(events.map((e) => e.type), ['invites_changed'], 'administrators hear of a resend');
  const mails = await mailsTo(dataDir, 'one@example.com');
  t.equal(mails.length, 2, 'mailed again');
  const newLink = linkPath(mails[1]!);
  t.not(newLink, firstLink);
  t.equal((await page(s, 'GET', firstLink)).status, 404, 'the old link no longer works');
  t.equal((await page(s, 'GET', newLink)).status, 200, 'the new link works');
  const listed = (await s.api('GET', '/invites', alice)).body.invites.find((i: any) => i.id === one.id);
  t.equal(listed.expiry_date, one.expiry_date, 'the expiry date stays');

  // Permissions: another member may not manage Alice's invitation; an administrator may.
  const byBob = await s.api('DELETE', `/invites/${two.id}`, bob);
  t.same([byBob.status, byBob.body.msg, byBob.body.code], [400, 'Must be an organization administrator', 'UNAUTHORIZED_PRINCIPAL']);
  t.equal((await s.api('POST', `/invites/${two.id}/resend`, bob)).body.msg, 'Must be an organization administrator');
  t.equal((await s.api('DELETE', `/invites/${two.id}`, guest)).body.msg, 'Not allowed for guest users');
  t.equal((await s.api('DELETE', '/invites/999999', alice)).body.msg, 'No such invitation');
  t.equal((await s.api('DELETE', '/invites/0', alice)).body.msg, 'No such invitation');

  const revoked = await verifyAction(t, s, alice, async () => {
    t.equal((await s.api('DELETE', `/invites/${two.id}`, admin)).status, 200);
  }, { register });
  t.same(revoked.map((e) => e.type), ['invites_changed'], 'the inviter hears of it');
  t.same((await s.api('GET', '/invites', alice)).body.invites.map((i: any) => i.id), [one.id], 'a revoked invitation is not listed');
  const twoLink = linkPath((await mailsTo(dataDir, 'two@example.com'))[0]!);
  t.equal((await page(s, 'POST', twoLink, { full_name: 'Two', password: 'correct horse' })).status, 404, 'its link creates no account');
  t.equal((await s.api('DELETE', `/invites/${two.id}`, admin)).body.msg, 'No such invitation', 'revoking twice');
  t.equal((await s.api('POST', `/invites/${two.id}/resend`, admin)).body.msg, 'No such invitation', 'resending a revoked one');

  // An accepted invitation is no longer managed.
  t.equal((await page(s, 'POST', newLink, { full_name: 'One', password: 'correct horse' })).status, 200);
  t.equal((await s.api('DELETE', `/invites/${one.id}`, alice)).body.msg, 'No such invitation');

  // Only owners manage others' invitations to become owners.
  t.equal((await s.api('POST', '/invites', s.owner, { invitee_emails: 'boss@example.com', stream_ids: [], invite_as: 100 })).status, 200);
  const boss = (await s.api('GET', '/invites', s.owner)).body.invites.find((i: any) => i.email === 'boss@example.com');
  t.equal((await s.api('DELETE', `/invites/${boss.id}`, admin)).body.msg, 'Must be an organization owner');
});

t.test('reusable invitation links', async (t) => {
  const s = await startTestServer(t);
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  const alice = await s.user(Role.MEMBER, 'Alice');
  const guest = await s.user(Role.GUEST, 'Guest');
  const channel = await createChannel(s, admin, 'lobby', { subscribers: [admin.id] });

  t.equal((await s.api('POST', '/invites/multiuse', alice, {})).body.msg, 'Insufficient permission', 'administrators only by default');
  t.equal((await s.api('POST', '/invites/multiuse', guest, {})).body.msg, 'Not allowed for guest users');
  t.equal((await s.api('POST', '/invites/multiuse', admin, { stream_ids: [424242] })).body.msg, 'Invalid stream ID 424242. No invites were sent.');
  t.equal((await s.api('POST', '/invites/multiuse', admin, { invite_as: 100 })).body.msg, 'Must be an organization owner');
  t.equal((await s.api('POST', '/invites/multiuse', admin, { invite_as: 7 })).status, 400);

  let link = '';
  const events = await verifyAction(t, s, alice, async () => {
    const created = await s.api('POST', '/invites/multiuse', admin, { stream_ids: [channel], invite_expires_in_minutes: 60 });
    t.equal(created.status, 200, JSON.stringify(created.body));
    link = created.body.invite_link;
  }, { register });
  t.same(events, [], 'a member who is not the inviter does not hear of it');
  t.match(link, /^https?:\/\/[^/]+\/join\/[A-Za-z0-9_-]+\/$/);
  const listed = (await s.api('GET', '/invites', admin)).body.invites;
  t.equal(listed.length, 1);
  t.same({ ...listed[0], invited: 0, expiry_date: 0, id: 0 }, { id: 0, invited_by_user_id: admin.id, invited: 0, expiry_date: 0, invited_as: 400, link_url: link, is_multiuse: true });
  t.equal(listed[0].expiry_date - listed[0].invited, 3600);
  t.same((await s.api('GET', '/invites', alice)).body.invites, [], "members do not see others' links");

  // Joining: the form, then an account with the link's channels; the link stays usable.
  const joinPath = new URL(link).pathname;
  t.equal((await page(s, 'GET', joinPath)).status, 200);
  const joined = await page(s, 'POST', joinPath, { email: 'joiner@example.com', full_name: 'Joiner', password: 'correct horse' });
  t.equal(joined.status, 200, joined.body);
  const login = await s.api('POST', '/fetch_api_key', null, { username: 'joiner@example.com', password: 'correct horse' });
  t.equal(login.status, 200);
  const joiner = { id: login.body.user_id, email: 'joiner@example.com', apiKey: login.body.api_key, auth: basicAuth('joiner@example.com', login.body.api_key) };
  t.same((await s.api('GET', '/users/me/subscriptions', joiner)).body.subscriptions.map((x: any) => x.stream_id), [channel]);
  t.equal((await s.api('GET', '/users/me', joiner)).body.role, 400);
  t.equal((await page(s, 'POST', joinPath, { email: 'joiner@example.com', full_name: 'Again', password: 'correct horse' })).status, 404, 'an address in use');
  t.equal((await page(s, 'POST', joinPath, { email: 'second@example.com', full_name: 'Second', password: 'correct horse' })).status, 200, 'used again');

  // Revoking: the inviter's and administrators' queues hear of it; the link stops working.
  const id = listed[0].id;
  t.equal((await s.api('DELETE', `/invites/multiuse/${id}`, alice)).body.msg, 'Must be an organization administrator');
  t.equal((await s.api('DELETE', `/invites/${id}`, admin)).body.msg, 'No such invitation', 'not an email invitation');
  const revoked = await verifyAction(t, s, admin, async () => {
    t.equal((await s.api('DELETE', `/invites/multiuse/${id}`, admin)).status, 200);
  }, { register });
  t.same(revoked.map((e) => e.type), ['invites_changed']);
  t.same((await s.api('GET', '/invites', admin)).body.invites, []);
  t.equal((await page(s, 'GET', joinPath)).status, 404);
  t.equal((await page(s, 'POST', joinPath, { email: 'third@example.com', full_name: 'Third', password: 'correct horse' })).status, 404);
  const again = await s.api('DELETE', `/invites/multiuse/${id}`, admin);
  t.same([again.status, again.body.msg], [400, 'Invitation has already been revoked']);
  t.equal((await s.api('DELETE', '/invites/multiuse/999999', admin)).body.msg, 'No such invitation');
});

t.test("deactivating an inviter ends the invitations they made (the real server's do_deactivate_user)", async (t) => {
  const { s, dataDir } = await serverWithMailbox(t, 'invites-inviter-');
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  const inviter = await s.user(Role.ADMINISTRATOR, 'Inviter');
  const alice = await s.user(Role.MEMBER, 'Alice');

  t.equal((await s.api('POST', '/invites', inviter, { invitee_emails: 'a@example.com, b@example.com', stream_ids: [] })).status, 200);
  const linkA = linkPath((await mailsTo(dataDir, 'a@example.com'))[0]!);
  const joinPath = new URL((await s.api('POST', '/invites/multiuse', inviter, {})).body.invite_link).pathname;
  t.equal((await s.api('POST', '/invites', alice, { invitee_emails: 'kept@example.com', stream_ids: [] })).status, 200);
  const aliceLink = (await s.api('POST', '/invites/multiuse', admin, {})).body.invite_link;
  t.equal((await s.api('GET', '/invites', admin)).body.invites.length, 5);

  const events = await verifyAction(t, s, admin, async () => {
    t.equal((await s.api('DELETE', `/users/${inviter.id}`, admin)).status, 200);
  }, { register: { event_types: ['invites_changed', 'realm_user'] } });
  t.same(events.map((e) => e.type), ['invites_changed', 'realm_user'], 'administrators hear once, before the account goes');

  const left = (await s.api('GET', '/invites', admin)).body.invites;
  t.same(left.map((i: any) => [i.invited_by_user_id, i.is_multiuse]).sort(), [[admin.id, true], [alice.id, false]], "only others' invitations are left");
  t.equal(left.find((i: any) => i.is_multiuse).link_url, aliceLink);
  t.equal((await page(s, 'POST', linkA, { full_name: 'A', password: 'correct horse' })).status, 404, 'an email invitation of the inviter creates no account');
  t.equal((await page(s, 'GET', joinPath)).status, 404, "the inviter's reusable link stops working");

  // Reactivating the inviter does not bring the invitations back (nor does the real server).
  t.equal((await s.api('POST', `/users/${inviter.id}/reactivate`, admin)).status, 200);
  t.equal((await s.api('GET', '/invites', admin)).body.invites.length, 2);

  // A member's pending email invitation ends with the member; someone with none left tells nobody.
  const quiet = await verifyAction(t, s, admin, async () => {
    t.equal((await s.api('DELETE', `/users/${alice.id}`, admin)).status, 200);
  }, { register: { event_types: ['invites_changed'] } });
  t.same(quiet.map((e) => e.type), ['invites_changed'], "alice's pending email invitation ends too");
  t.same((await s.api('GET', '/invites', admin)).body.invites.map((i: any) => i.is_multiuse), [true]);
  const again = await verifyAction(t, s, admin, async () => {
    t.equal((await s.api('DELETE', `/users/${inviter.id}`, admin)).status, 200);
  }, { register: { event_types: ['invites_changed'] } });
  t.same(again, [], 'no invitations left to end: no invites_changed');
});
