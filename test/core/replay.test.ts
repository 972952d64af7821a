import t from 'tap';
import { startTestServer, Role, type TestUser } from '../helpers/server.js';
import { tableChecksums } from '../../src/read/checksums.js';
import { allProjections } from '../../projections/index.js';

// A small seeded generator, so a failure can be reproduced from the printed seed.
function random(seed: number) {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

t.test('after a randomized workload, rebuild reproduces identical read tables', async (t) => {
  const seed = Number(process.env.REPLAY_SEED ?? Date.now() % 100_000);
  t.comment(`seed ${seed}`);
  const rand = random(seed);
  const pick = <T>(items: T[]) => items[Math.floor(rand() * items.length)]!;
  const s = await startTestServer(t);
  const admin = await s.user(Role.ADMINISTRATOR, 'Admin');
  const people: TestUser[] = [admin];
  for (let i = 0; i < 60; i++) {
    const action = rand();
    if (action < 0.25 || people.length < 3) {
      people.push(await s.user(pick([Role.MEMBER, Role.MEMBER, Role.MODERATOR, Role.GUEST]), `Person ${i}`));
    } else if (action < 0.45) {
      await s.api('PATCH', `/users/${pick(people).id}`, admin, { full_name: `Name ${i}` });
    } else if (action < 0.6) {
      await s.api('PATCH', `/users/${pick(people.slice(1)).id}`, admin, { role: pick([Role.MEMBER, Role.MODERATOR, Role.GUEST]) });
    } else if (action < 0.7) {
      const target = pick(people.slice(1));
      await s.api('DELETE', `/users/${target.id}`, admin);
      if (rand() < 0.5) await s.api('POST', `/users/${target.id}/reactivate`, admin);
    } else if (action < 0.8) {
      await s.api('POST', '/register', pick(people), { event_types: ['realm_user'] });
    } else if (action < 0.9) {
      await s.api('POST', '/bots', pick(people), { full_name: `Bot ${i}`, short_name: `bot${i}` });
    } else {
      await s.api('POST', '/users/me/api_key/regenerate', admin).then(async (r) => {
        if (r.status === 200) {
          admin.apiKey = r.body.api_key;
          admin.auth = `Basic ${Buffer.from(`${admin.email}:${r.body.api_key}`).toString('base64')}`;
        }
      });
    }
  }
  const tables = allProjections.flatMap((p) => p.tables);
  const before = await tableChecksums(s.platform.db, tables);
  t.ok(before.find((x) => x.table === 'users')!.rows > 3, 'the workload wrote users');
  const head = await s.platform.store.head();
  const reached = await s.platform.projections.rebuild();
  t.equal(reached, head.position, 'rebuild folded the whole log');
  const after = await tableChecksums(s.platform.db, tables);
  t.same(after, before, 'every read table is identical after rebuild');
});
