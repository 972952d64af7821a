import t from 'tap';
import { randomUUID } from 'node:crypto';
import { testConfig } from '../helpers/config.js';
import { buildServer } from '../../src/build-server.js';
import { allProjections } from '../../projections/index.js';
import { basicAuth, encodeParams } from '../helpers/server.js';
import { createUser } from '../../src/services/users.js';
import { Role } from '../../src/domain/roles.js';

// Two servers on one PostgreSQL database: a bot's writes through either, in turns, each read back
// through both. A write decided on a stale state (one that missed the other server's last write)
// would lose a key or count a removed one.
t.test('bot storage written through two servers in turns: every read is the latest', { skip: !process.env.TEST_DATABASE_URL && 'PostgreSQL only' }, async (t) => {
  const config = await testConfig();
  const a = await buildServer(config, { projections: allProjections });
  t.teardown(() => a.close());
  const b = await buildServer(config, { projections: allProjections });
  t.teardown(() => b.close());
  const owner = await a.platform.db.selectFrom('users').selectAll().where('role', '=', Role.OWNER).executeTakeFirstOrThrow();
  const meta = { actorId: owner.id, realmId: owner.realm_id, client: 'test', requestId: randomUUID(), now: new Date() };
  const bot = await createUser(a.platform, meta, { email: 'keeper-bot@example.com', full_name: 'Keeper', role: Role.MEMBER, bot_type: 1, bot_owner_id: owner.id });
  const auth = basicAuth('keeper-bot@example.com', bot.api_key);
  const call = async (node: typeof a, method: string, params: Record<string, unknown> = {}) => {
    const response = await node.fastify.inject({
      method: method as 'GET',
      url: `/api/v1/bot_storage${method === 'GET' ? `?${encodeParams(params)}` : ''}`,
      headers: { authorization: auth, ...(method === 'GET' ? {} : { 'content-type': 'application/x-www-form-urlencoded' }) },
      payload: method === 'GET' ? undefined : encodeParams(params),
    });
    return { status: response.statusCode, body: response.json() };
  };

  const expected: Record<string, string> = {};
  const nodes = [['A', a], ['B', b]] as const;
  for (let round = 0; round < 6; round++) {
    for (const [name, node] of nodes) {
      const value = `${name}${round}`;
      t.equal((await call(node, 'PUT', { storage: { count: value, [`by${name}`]: value } })).status, 200, `${value}: written`);
      expected.count = value;
      expected[`by${name}`] = value;
      if (round % 2 === 1) {
        // The other server's key: a removal decided on a stale state would be refused.
        const other = name === 'A' ? 'byB' : 'byA';
        t.equal((await call(node, 'DELETE', { keys: [other] })).status, 200, `${value}: the other server's key removed`);
        delete expected[other];
      }
      for (const [reader, readerNode] of nodes) t.same((await call(readerNode, 'GET')).body.storage, expected, `${value}: read through ${reader}`);
    }
  }
  // Writes through both at once, then one more through each: the last write of each key wins.
  const both = await Promise.all(nodes.map(([name, node]) => call(node, 'PUT', { storage: { [`last${name}`]: name } })));
  t.same(both.map((r) => r.status), [200, 200], 'concurrent writes through both servers');
  t.equal((await call(a, 'PUT', { storage: { count: 'final' } })).status, 200);
  t.same((await call(b, 'GET', { keys: ['count', 'lastA', 'lastB'] })).body.storage, { count: 'final', lastA: 'A', lastB: 'B' }, 'every value the latest');
});
