import t from 'tap';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { randomUUID } from 'node:crypto';
import { connect } from 'nats';

const natsUrl = process.env.TEST_NATS_URL;
const skip = !natsUrl && 'NATS only (TEST_NATS_URL)';

t.test('scripts/drop-nats-streams.mjs deletes the streams named with its prefix and no other', { skip }, async (t) => {
  const nc = await connect({ servers: natsUrl });
  const jsm = await nc.jetstreamManager();
  // A prefix of this test's own, so that other test files' streams are never touched.
  const prefix = `DROPTEST${randomUUID().replace(/-/g, '').slice(0, 10).toUpperCase()}_`;
  const mine = [`${prefix}A`, `${prefix}B`];
  const other = `KEEP${prefix}C`;
  t.teardown(async () => {
    for (const name of [...mine, other]) await jsm.streams.delete(name).catch(() => undefined);
    await nc.close();
  });
  for (const name of [...mine, other]) await jsm.streams.add({ name, subjects: [`${name.toLowerCase()}.>`] });
  const { stdout } = await promisify(execFile)(process.execPath, ['scripts/drop-nats-streams.mjs', prefix, natsUrl!]);
  t.match(stdout, /dropped 2 NATS stream/, 'says how many it dropped');
  const names: string[] = [];
  for await (const name of jsm.streams.names()) names.push(name);
  t.same(mine.filter((name) => names.includes(name)), [], 'the prefixed streams are gone');
  t.ok(names.includes(other), 'a stream whose name only contains the prefix stays');

  const refused = await promisify(execFile)(process.execPath, ['scripts/drop-nats-streams.mjs', ''], {}).then(() => 0, (error: { code: number }) => error.code);
  t.equal(refused, 2, 'no prefix: refused, nothing dropped');
});
