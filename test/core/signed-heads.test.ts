import t, { type Test } from 'tap';
import { mkdtempSync, rmSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { signedPlatform, appendThings } from '../helpers/signed-platform.js';
import { testMetadata } from '../helpers/platform.js';
import { appendRaw } from '../helpers/raw-append.js';
import { generateLogKeyCommand, readPublicKeys } from '../../src/cli/commands.js';
import type { Platform } from '../../src/platform.js';
import { parseKeptHeads, verifyChain } from '../../src/eventstore/verify.js';

const quiet = () => undefined;

/** `batches` committed batches of `size` events each, signed before this resolves. */
async function append(p: Platform, batches = 3, size = 2): Promise<void> {
  for (let b = 0; b < batches; b++) {
    await appendThings(p, b, size);
  }
  await p.store.signer!.flush();
}

t.test('generate-log-key writes a private key only its owner can read, and never overwrites one', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'log-key-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const lines: string[] = [];
  const files = generateLogKeyCommand((line) => lines.push(line), dir);
  t.equal(statSync(files.privateFile).mode & 0o777, 0o600);
  t.match(readFileSync(files.privateFile, 'utf8'), /BEGIN PRIVATE KEY/);
  t.match(readFileSync(files.publicFile, 'utf8'), /BEGIN PUBLIC KEY/);
  t.ok(lines.some((line) => line.includes(files.privateFile)) && lines.some((line) => line.includes(files.publicFile)), 'says where');
  t.throws(() => generateLogKeyCommand(quiet, dir), /EEXIST/);
});

t.test('a forged append with a correct hash passes plain verify and fails with the public key, naming its position', async (t) => {
  const { p, publicKeys } = await signedPlatform(t);
  await append(p);
  const genuine = await verifyChain(p.db, { publicKeys });
  t.equal(genuine.ok, true, genuine.reason ?? '');
  t.same(genuine.signatures, { checked: 3, lastSignedPosition: 6, unsignedTail: 0 }, 'one signature per batch');

  // Whoever can write the table appends a role change past the store: the hash is right, nothing signed it.
  await appendRaw(p.db, 'user-1', 'UserRoleChanged', JSON.stringify({ user_id: 2, role: 100 }));
  t.equal((await verifyChain(p.db)).ok, true, 'the chain alone cannot tell');
  const tail = await verifyChain(p.db, { publicKeys });
  t.equal(tail.ok, false);
  t.equal(tail.firstBrokenPosition, 7);
  t.match(tail.reason ?? '', /1 events after the last signed head \(position 6\) are unsigned, from position 7/);
  t.equal((await verifyChain(p.db, { publicKeys, tolerateUnsigned: 1 })).ok, true, 'a tolerated tail (a running server)');

  // The server appends and signs after the forged row: it is now a hole between signed ranges.
  await append(p, 1);
  const hole = await verifyChain(p.db, { publicKeys, tolerateUnsigned: 1_000 });
  t.equal(hole.ok, false);
  t.equal(hole.firstBrokenPosition, 7);
  t.match(hole.reason ?? '', /position 7 is in no signed range/);
  t.equal((await verifyChain(p.db)).ok, true, 'plain verify still passes');
});

t.test('a log signed only from some point on: the older rows are bound by the first signed hash', async (t) => {
  const { p, publicKeys } = await signedPlatform(t);
  const signer = p.store.signer;
  p.store.signer = undefined;
  await appendRaw(p.db, 'old-1', 'ThingHappened', '{"n":1}');
  await appendRaw(p.db, 'old-2', 'ThingHappened', '{"n":2}');
  p.store.signer = signer;
  await append(p, 2);
  const report = await verifyChain(p.db, { publicKeys });
  t.equal(report.ok, true, report.reason ?? '');
  t.same(report.signatures, { checked: 2, lastSignedPosition: 6, unsignedTail: 0 });
});

t.test('contiguous batches queued while a signature is written merge into one', async (t) => {
  const { p, publicKeys } = await signedPlatform(t);
  const meta = testMetadata();
  await Promise.all(Array.from({ length: 20 }, (_, i) => p.store.append([{ streamId: `s-${i}`, expectedVersion: undefined, events: [{ type: 'ThingHappened', data: { i } }] }], meta)));
  await p.store.signer!.flush();
  const report = await verifyChain(p.db, { publicKeys });
  t.equal(report.ok, true, report.reason ?? '');
  t.equal(report.signatures?.lastSignedPosition, 20);
  t.ok(report.signatures!.checked <= 20, `${report.signatures!.checked} signatures for 20 events`);
});

t.test('a tampered signature, a signature by an unknown key and a signed head off the chain all fail', async (t) => {
  const { p, dir, publicKeys } = await signedPlatform(t);
  await append(p);
  const last = await p.db.selectFrom('log_signatures').selectAll().orderBy('position', 'desc').executeTakeFirstOrThrow();
  const flipped = Buffer.from(last.signature, 'base64');
  flipped[0] = flipped[0]! ^ 1;
  await p.db.updateTable('log_signatures').set({ signature: flipped.toString('base64') }).where('position', '=', last.position).execute();
  const bad = await verifyChain(p.db, { publicKeys });
  t.equal(bad.ok, false);
  t.equal(bad.firstBrokenPosition, last.position);
  t.match(bad.reason ?? '', new RegExp(`the signature at position ${last.position} does not verify`));

  await p.db.updateTable('log_signatures').set({ signature: last.signature }).where('position', '=', last.position).execute();
  t.equal((await verifyChain(p.db, { publicKeys })).ok, true, 'restored');
  const other = readPublicKeys([generateLogKeyCommand(quiet, path.join(dir, 'other')).publicFile]);
  const wrongKey = await verifyChain(p.db, { publicKeys: other });
  t.equal(wrongKey.ok, false);
  t.match(wrongKey.reason ?? '', /made with key [0-9a-f]{64}, which is not among the given public keys/);
  t.equal((await verifyChain(p.db, { publicKeys: [...other, ...publicKeys] })).ok, true, 'old and new key while rotating');

  // A range widened to cover a forged row: the signature covers the range too.
  await p.db.updateTable('log_signatures').set({ from_position: last.from_position - 1 }).where('position', '=', last.position).execute();
  t.match((await verifyChain(p.db, { publicKeys })).reason ?? '', /does not verify|overlaps/);
  await p.db.updateTable('log_signatures').set({ from_position: last.from_position }).where('position', '=', last.position).execute();

  // A signed head whose hash is not the chain's.
  await p.db.updateTable('log_signatures').set({ hash: 'f'.repeat(64) }).where('position', '=', last.position).execute();
  const off = await verifyChain(p.db, { publicKeys });
  t.equal(off.ok, false);
  t.equal(off.firstBrokenPosition, last.position);
  await p.db.updateTable('log_signatures').set({ hash: last.hash }).where('position', '=', last.position).execute();

  // A signature beyond the head: the log was cut after it was signed.
  await p.db.insertInto('log_signatures').values({ ...last, position: 99, from_position: 7, signed_at: last.signed_at.toISOString() }).execute();
  t.match((await verifyChain(p.db, { publicKeys })).reason ?? '', /signed head at position 99 is beyond the log's head 6/);
});

t.test('recorded_at is covered by the hash, to the microsecond', async (t) => {
  const { p } = await signedPlatform(t);
  await append(p);
  t.equal((await verifyChain(p.db)).ok, true);
  const versions = await p.db.selectFrom('events').select('hash_version').distinct().execute();
  t.same(versions.map((v) => v.hash_version), [2], 'new rows hash recorded_at');
  const at = 3;
  await sql`ALTER TABLE events DISABLE TRIGGER events_no_update_delete`.execute(p.db);
  t.teardown(() => sql`ALTER TABLE events ENABLE TRIGGER events_no_update_delete`.execute(p.db));
  await sql`UPDATE events SET recorded_at = recorded_at + interval '1 microsecond' WHERE position = ${at}`.execute(p.db);
  const report = await verifyChain(p.db);
  t.equal(report.ok, false);
  t.equal(report.firstBrokenPosition, at);
  t.match(report.reason ?? '', /hash mismatch at position 3/);
  await sql`UPDATE events SET recorded_at = recorded_at - interval '1 microsecond' WHERE position = ${at}`.execute(p.db);
  t.equal((await verifyChain(p.db)).ok, true, 'restored');
  // Back to the formula without recorded_at: refused.
  await sql`UPDATE events SET hash_version = 1 WHERE position = ${at}`.execute(p.db);
  t.equal((await verifyChain(p.db)).firstBrokenPosition, at);
});

t.test('kept heads must all be in the chain', async (t) => {
  const { p } = await signedPlatform(t);
  await append(p, 2);
  const first = await p.store.head();
  await append(p, 2);
  const second = await p.store.head();
  const heads = parseKeptHeads(`# kept heads\n${first.position} ${first.hash}\nhead: ${second.position} ${second.hash}\n\n`);
  const good = await verifyChain(p.db, { heads });
  t.equal(good.ok, true, good.reason ?? '');
  t.equal(good.keptHeadsFound, 2);
  const fake = await verifyChain(p.db, { heads: [{ position: first.position, hash: 'a'.repeat(64) }] });
  t.equal(fake.ok, false);
  t.equal(fake.firstBrokenPosition, first.position);
  t.match(fake.reason ?? '', new RegExp(`the kept head at position ${first.position} is not in the chain`));
  const beyond = await verifyChain(p.db, { heads: [{ position: 999, hash: second.hash }] });
  t.match(beyond.reason ?? '', /kept head at position 999 is beyond the log's head 8/);
  t.throws(() => parseKeptHeads('12 abc'), /line 1 of the heads file is not "position hash"/);
});
