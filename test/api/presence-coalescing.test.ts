import t from 'tap';
import { startTestServer, Role, sql } from '../helpers/server.js';
import { agePresence, logLength, ping, presenceEvents } from '../helpers/presence-fixture.js';
import { PresenceTracker } from '../../src/services/presence-tracker.js';
import { PresenceSnapshots } from '../../src/services/presence-snapshot.js';
import { PresenceBodies } from '../../src/services/presence-body.js';
import type { Db } from '../../src/db/database.js';

const now = () => Date.now() / 1000;

async function row(db: Db, userId: number) {
  const r = await db.selectFrom('presence_last_seen').selectAll().where('user_id', '=', userId).executeTakeFirst();
  return r && { last_active_time: r.last_active_time === null ? null : Number(r.last_active_time), last_connected_time: Number(r.last_connected_time), logged_status: r.logged_status };
}

t.test('a ping that only moves the times: shown at once to others, written by the flush, kept over a restart', async (t) => {
  const s = await startTestServer(t);
  const ann = await s.user(Role.MEMBER, 'Ann');
  const cy = await s.user(Role.MEMBER, 'Cy');
  await ping(s, ann);
  // A minute later (past the 55 s step, within the 70 s offset): the times move, nothing is news.
  await agePresence(s, ann, 60);
  const before = await logLength(s);
  t.equal((await ping(s, ann, { ping_only: true })).status, 200);
  t.equal(await logLength(s), before, 'no event');

  const realm = (await s.api('GET', '/realm/presence', cy)).body.presences[ann.email];
  t.ok(Math.abs(realm.aggregated.timestamp - now()) < 5, 'GET /realm/presence of another user shows the new time at once');
  const one = (await s.api('GET', `/users/${ann.id}/presence`, cy)).body.presence;
  t.ok(Math.abs(one.aggregated.timestamp - now()) < 5, 'so does GET /users/{id}/presence');
  const reg = await s.api('POST', '/register', cy, { fetch_event_types: ['presence'], slim_presence: true });
  t.ok(Math.abs(reg.body.presences[String(ann.id)].idle_timestamp - now()) < 5, 'and the /register section');
  const slim = (await ping(s, cy, { slim_presence: true })).body.presences[String(ann.id)];
  t.ok(Math.abs(slim.active_timestamp - now()) < 5, 'and the presences of a ping');

  // A graceful stop writes what the process holds; the next process reads it from the table.
  await s.platform.presence.tracker.close();
  t.ok(Math.abs((await row(s.platform.db, ann.id))!.last_connected_time - now()) < 5, 'written on close');
  s.platform.presence = { tracker: new PresenceTracker(s.platform.db), snapshots: new PresenceSnapshots(s.platform.db, (x) => s.platform.tablesVersion(x)), bodies: new PresenceBodies() };
  const after = (await s.api('GET', '/realm/presence', cy)).body.presences[ann.email];
  t.ok(Math.abs(after.aggregated.timestamp - now()) < 5, 'a fresh process shows the time from the table');
  t.equal((await presenceEvents(s, ann.id)).length, 1);
});

t.test('PresenceTracker: held pings cost no statement, one flush writes them all, two processes log a change once', async (t) => {
  const s = await startTestServer(t);
  const db = s.platform.db;
  const users = [await s.user(Role.MEMBER, 'Ann'), await s.user(Role.MEMBER, 'Bob'), await s.user(Role.MEMBER, 'Cy')];
  const a = new PresenceTracker(db);
  const b = new PresenceTracker(db);
  const t0 = Math.floor(now());

  // The first pings are news: written at once (compare-and-set), through either process, once.
  const first = await Promise.all(users.flatMap((u) => [a.ping(u.id, 1, 'active', t0), b.ping(u.id, 1, 'active', t0)]));
  t.equal(first.filter((o) => o.changed === 'active').length, users.length, 'one change per user across both processes');
  for (const u of users) t.same(await row(db, u.id), { last_active_time: t0, last_connected_time: t0, logged_status: 'active' });

  // A minute later every user pings process a: the times move in memory only.
  for (const u of users) t.match(await a.ping(u.id, 1, 'active', t0 + 60), { write: true, changed: null });
  for (const u of users) {
    t.equal((await row(db, u.id))!.last_connected_time, t0, 'the row is not written per ping');
    t.match(a.local(u.id), { last_active_time: t0 + 60, last_connected_time: t0 + 60 }, 'the process shows its own view');
  }
  await a.flush();
  for (const u of users) t.same(await row(db, u.id), { last_active_time: t0 + 60, last_connected_time: t0 + 60, logged_status: 'active' }, 'one flush wrote every row');

  // Process b still holds t0 for Ann: an idle ping 80 s after that looks like news to it, but the
  // row says otherwise (active 20 s before), so nothing is logged.
  t.match(await b.ping(users[0]!.id, 1, 'idle', t0 + 80), { changed: null });
  // 80 s after the last activity the idle ping is news, decided once though both processes see it.
  const idle = await Promise.all([a.ping(users[0]!.id, 1, 'idle', t0 + 141), b.ping(users[0]!.id, 1, 'idle', t0 + 141)]);
  t.equal(idle.filter((o) => o.changed === 'idle').length, 1, 'went idle once');
  t.equal((await row(db, users[0]!.id))!.logged_status, 'idle');

  // A flush never moves a time back, whatever another process wrote since.
  await a.ping(users[1]!.id, 1, 'active', t0 + 120);
  await b.ping(users[1]!.id, 1, 'active', t0 + 200);
  await b.flush();
  await a.flush();
  t.match(await row(db, users[1]!.id), { last_active_time: t0 + 200, last_connected_time: t0 + 200 });
  t.match(a.local(users[1]!.id), { last_connected_time: t0 + 200 }, 'and the flush brings the row back into the view');

  // Closing writes what is held.
  await a.ping(users[2]!.id, 1, 'active', t0 + 130);
  await a.close();
  t.match(await row(db, users[2]!.id), { last_connected_time: t0 + 130 });
  await b.close();
});

t.test('a ping\'s presences: a shared copy, with the pinging user\'s own entry always current', async (t) => {
  const s = await startTestServer(t);
  // Copies kept for a minute here, so the second ping is sure to reuse the first one's.
  s.platform.presence.bodies = new PresenceBodies(60_000);
  const ann = await s.user(Role.MEMBER, 'Ann');
  const cy = await s.user(Role.MEMBER, 'Cy');
  await ping(s, ann);
  await agePresence(s, ann, 60);
  const byCy = await ping(s, cy, { unknown_flag: 1 });
  t.same(byCy.body.ignored_parameters_unsupported, ['unknown_flag'], 'the envelope keeps ignored parameters');
  const annSeenByCy = byCy.body.presences[ann.email].aggregated.timestamp;
  t.ok(now() - annSeenByCy >= 55, 'the copy holds Ann as last active a minute ago');

  // Ann's ping moves her times (held, no table changed): her reply reuses the copy with her entry new.
  const byAnn = await ping(s, ann);
  t.equal(byAnn.headers['content-type'], 'application/json; charset=utf-8');
  t.ok(Math.abs(byAnn.body.presences[ann.email].aggregated.timestamp - now()) < 5, 'her own entry is current');
  t.same(byAnn.body.presences[cy.email], byCy.body.presences[cy.email], 'the others come from the copy');
  const fresh = await s.api('GET', '/realm/presence', cy);
  t.same(byAnn.body.presences, fresh.body.presences, 'the same dictionary a fresh read builds');
  const slim = await ping(s, ann, { slim_presence: true });
  const freshSlim = await s.api('POST', '/register', cy, { fetch_event_types: ['presence'], slim_presence: true });
  t.same(slim.body.presences, freshSlim.body.presences, 'slim too');
});

t.test('PresenceTracker: a failed flush keeps the held rows for the next one', async (t) => {
  const s = await startTestServer(t);
  const db = s.platform.db;
  const ann = await s.user(Role.MEMBER, 'Ann');
  const tracker = new PresenceTracker(db);
  const t0 = Math.floor(now());
  await tracker.ping(ann.id, 1, 'active', t0);
  await tracker.ping(ann.id, 1, 'active', t0 + 60);
  await sql`ALTER TABLE presence_last_seen RENAME TO presence_last_seen_away`.execute(db);
  const failed = tracker.flush();
  const queued = tracker.flush();
  await t.rejects(failed, 'the flush reports the failure');
  await t.rejects(queued, 'a flush queued behind it runs, and fails the same way');
  await sql`ALTER TABLE presence_last_seen_away RENAME TO presence_last_seen`.execute(db);
  t.equal((await row(db, ann.id))!.last_connected_time, t0, 'nothing written yet');
  await tracker.flush();
  t.equal((await row(db, ann.id))!.last_connected_time, t0 + 60, 'the next flush writes the held times');
});
