// Log-signing leftovers (issue 24 item 10): sign-log signs what a stop left unsigned, signing failures are
// logged once and counted, and a PostgreSQL server without a key says so at start.
import t, { type Test } from 'tap';
import { Writable } from 'node:stream';
import { sql } from 'kysely';
import { testConfig } from '../helpers/config.js';
import { signedPlatform, appendThings } from '../helpers/signed-platform.js';
import { testMetadata } from '../helpers/platform.js';
import { signLogCommand } from '../../src/cli/commands.js';
import type { Platform } from '../../src/platform.js';
import { buildServer } from '../../src/build-server.js';
import { allProjections } from '../../projections/index.js';
import { verifyChain } from '../../src/eventstore/verify.js';
import { parseSigningKey } from '../../src/eventstore/log-signing.js';
import { readLogId } from '../../src/eventstore/log-identity.js';
import { signUnsignedRanges } from '../../src/eventstore/sign-unsigned.js';

const quiet = () => undefined;

async function signedPlatformWithSignLog(t: Test) {
  const { p, config, publicKeys } = await signedPlatform(t);
  const signingKey = parseSigningKey(config.logSigningKey!);
  // What sign-log does once it has opened the database (the command opens its own, from the configuration).
  const signLog = async (options: { tail: boolean }) => signUnsignedRanges(p.db, signingKey, await readLogId(p.db), options);
  return { p, config, publicKeys, signLog };
}

/**
 * Appends `batches` batches, waiting for each one's signature before the next: otherwise, on a database slower to
 * answer, a batch can merge into the range still being signed and the counts below depend on timing.
 */
async function append(p: Platform, batches = 1, size = 2): Promise<void> {
  for (let b = 0; b < batches; b++) {
    await appendThings(p, b, size);
    await p.store.signer?.flush();
  }
}

/** A batch committed by a process that stopped before signing it: committed, never signed. */
async function appendUnsigned(p: Platform, batches = 1): Promise<void> {
  const signer = p.store.signer;
  p.store.signer = undefined;
  await append(p, batches);
  p.store.signer = signer;
}

t.test('sign-log signs a batch a stop left unsigned, and only once', async (t) => {
  const { p, publicKeys, signLog } = await signedPlatformWithSignLog(t);
  await append(p, 2);
  await appendUnsigned(p);
  await append(p, 1);
  const before = await verifyChain(p.db, { publicKeys });
  t.equal(before.ok, false);
  t.match(before.reason ?? '', /position 5 is in no signed range/);

  const signed = await signLog({ tail: false });
  t.same(signed.map((r) => [r.from_position, r.position]), [[5, 6]]);
  const after = await verifyChain(p.db, { publicKeys });
  t.equal(after.ok, true, after.reason ?? '');
  t.equal((await signLog({ tail: false })).length, 0, 'idempotent');

  // Rows after the last signed range are signed only when asked (every server stopped).
  await appendUnsigned(p, 2);
  t.equal((await signLog({ tail: false })).length, 0);
  t.equal((await verifyChain(p.db, { publicKeys })).ok, false);
  t.equal((await signLog({ tail: true })).length, 1);
  const tail = await verifyChain(p.db, { publicKeys });
  t.equal(tail.ok, true, tail.reason ?? '');
  t.same(tail.signatures, { checked: 5, lastSignedPosition: 12, unsignedTail: 0 });
  t.equal((await signLog({ tail: true })).length, 0, 'idempotent');
});

t.test('sign-log refuses a broken chain and needs the key', async (t) => {
  const { p, config, signLog } = await signedPlatformWithSignLog(t);
  await appendUnsigned(p, 2);
  await sql`ALTER TABLE events DISABLE TRIGGER USER`.execute(p.db).catch(() => undefined);
  await sql`UPDATE events SET data = '{"n":99}'::jsonb WHERE position = 2`.execute(p.db).catch(() => undefined);
  const tampered = !(await verifyChain(p.db)).ok;
  t.ok(tampered, 'the test could tamper with the log');
  await t.rejects(signLog({ tail: true }), /does not verify/);
  t.equal((await p.db.selectFrom('log_signatures').selectAll().execute()).length, 0, 'nothing signed');
  await t.rejects(signLogCommand({ ...config, logSigningKey: undefined }, [], quiet, { tail: true }), /needs the signing key/);
});

t.test('a failing signature write is reported once per distinct error, counted, and retried', async (t) => {
  const { p } = await signedPlatformWithSignLog(t);
  const signer = p.store.signer!;
  const reports: string[] = [];
  signer.onFailure = (error) => reports.push((error as Error).message);
  await sql`ALTER TABLE log_signatures ADD CONSTRAINT refuse_all CHECK (position < 0) NOT VALID`.execute(p.db);
  await append(p, 3);
  t.equal(signer.failures, 3, 'every failed attempt counted');
  t.equal(reports.length, 1, 'reported once');
  t.ok(signer.unsignedRanges > 0);
  await sql`ALTER TABLE log_signatures DROP CONSTRAINT refuse_all`.execute(p.db);
  await append(p, 1);
  t.equal(signer.unsignedRanges, 0, 'retried with the next batch');
  await sql`ALTER TABLE log_signatures ADD CONSTRAINT refuse_all CHECK (position < 0) NOT VALID`.execute(p.db);
  await append(p, 1);
  t.equal(reports.length, 2, 'a failure after a success is reported again');
});

t.test('/metrics counts signing failures', async (t) => {
  const { config } = await signedPlatformWithSignLog(t);
  const server = await buildServer(config, { projections: allProjections, inMemory: !config.databaseUrl });
  t.teardown(() => server.close());
  await sql`ALTER TABLE log_signatures ADD CONSTRAINT refuse_all CHECK (position < 0) NOT VALID`.execute(server.platform.db);
  await server.platform.store.append([{ streamId: 'thing-x', expectedVersion: undefined, events: [{ type: 'ThingHappened', data: {} }] }], testMetadata());
  await server.platform.store.signer!.flush();
  const text = (await server.fastify.inject({ method: 'GET', url: '/metrics' })).body;
  t.match(text, /^eventlog_signing_failures_total [1-9]/m);
  t.match(text, /^eventlog_unsigned_ranges [1-9]/m);
});

t.test('on PostgreSQL, a server without a signing key warns at start', { skip: process.env.TEST_DATABASE_URL ? false : 'needs TEST_DATABASE_URL' }, async (t) => {
  const config = await testConfig({ logSigningKey: undefined });
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  const server = await buildServer(config, { projections: allProjections, logger: { level: 'info', stream } });
  t.teardown(() => server.close());
  const warning = lines.map((line) => JSON.parse(line) as { level: number; msg: string }).find((entry) => /log signing is off/.test(entry.msg));
  t.ok(warning, 'the warning is logged');
  t.equal(warning?.level, 40, 'at warn level');
});
