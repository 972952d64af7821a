import { createWriteStream, createReadStream, existsSync, readFileSync, writeFileSync } from 'node:fs';
import type { KeyObject } from 'node:crypto';
import { createInterface } from 'node:readline';
import { randomUUID } from 'node:crypto';
import cliProgress from 'cli-progress';
import { sql } from 'kysely';
import type { Config } from '../config.js';
import type { Db } from '../db/database.js';
import { createPlatform, type Platform } from '../platform.js';
import type { Projection } from '../projections-api.js';
import { migrateToLatest } from '../db/migrate.js';
import type { OnlineRebuildReport } from '../projection-runner.js';
import { tableChecksums, type TableChecksum } from '../read/checksums.js';
import { parseKeptHeads, verifyChain, type VerifyOptions } from '../eventstore/verify.js';
import { RECORDED_AT_TEXT } from '../eventstore/recorded-at.js';
import { generateSigningKeyFiles, parsePublicKey, parseSigningKey } from '../eventstore/log-signing.js';
import { signUnsignedRanges } from '../eventstore/sign-unsigned.js';
import { readLogId } from '../eventstore/log-identity.js';
import { readSignatureFile, signatureFileOf, signedHeadsMismatch, writeSignatureFile } from '../eventstore/signature-transfer.js';
import { APPEND_LOCK_KEY } from '../eventstore/event-store.js';
import { ensureOrganization, writeZuliprc } from '../services/bootstrap.js';
import { createUser } from '../services/users.js';
import { reactivateRealm } from '../services/realm-deactivation.js';
import { getDefaultRealm } from '../read/realm.js';
import { ALL_ROLES } from '../domain/roles.js';
import { openReplaySource, parseReplayPoint, replayInto, targetConfig, type ReplayReport } from './replay.js';
import { EVENT_COLUMNS } from '../eventstore/types.js';
import { jsonText } from '../eventstore/json-text.js';
import { writeExport } from '../eventstore/log-export.js';
import { adoptKekFile, configuredKekSecret, parseKekSecret } from '../eventstore/crypto/kek.js';
import { keyFileOf, readKeyFile, writeKeyFile } from '../eventstore/crypto/key-transfer.js';

export type Out = (line: string) => void;

async function withPlatform<T>(config: Config, projections: readonly Projection[], run: (p: Platform) => Promise<T>): Promise<T> {
  const platform = await createPlatform(config, { projections, startWorkers: false });
  try {
    return await run(platform);
  } finally {
    await platform.close();
  }
}

export async function migrateCommand(config: Config, projections: readonly Projection[], out: Out): Promise<void> {
  await withPlatform(config, projections, async (p) => {
    const result = await migrateToLatest(p.db);
    out(`migrations: ${result.results?.length ? result.results.map((r) => `${r.migrationName} ${r.status}`).join(', ') : 'up to date'}`);
  });
}

function printChecksums(out: Out, label: string, sums: TableChecksum[]): void {
  out(`${label}:`);
  for (const s of sums) out(`  ${s.table.padEnd(28)} ${String(s.rows).padStart(9)} rows  ${s.md5}`);
}

export interface RebuildReport {
  events: number;
  seconds: number;
  eventsPerSecond: number;
  before: TableChecksum[];
  after: TableChecksum[];
  identical: boolean;
}

/** Drops and refills every read table from the log; the checksums before and after must match. */
export async function rebuildCommand(config: Config, projections: readonly Projection[], out: Out, showProgress = true): Promise<RebuildReport> {
  return withPlatform(config, projections, async (p) => {
    const tables = projections.flatMap((x) => x.tables);
    const before = await tableChecksums(p.db, tables);
    printChecksums(out, 'before', before);
    const head = await p.store.head();
    const bar = showProgress && process.stderr.isTTY
      ? new cliProgress.SingleBar({ format: 'rebuild [{bar}] {percentage}% | {value}/{total} events | {rate} events/s' }, cliProgress.Presets.shades_classic)
      : undefined;
    bar?.start(head.position, 0, { rate: 0 });
    const started = Date.now();
    const reached = await p.projections.rebuild((position) => {
      const seconds = (Date.now() - started) / 1000;
      bar?.update(position, { rate: Math.round(position / Math.max(seconds, 0.001)) });
      if (!bar) out(`rebuild: ${position}/${head.position} events`);
    });
    bar?.stop();
    const seconds = (Date.now() - started) / 1000;
    const after = await tableChecksums(p.db, tables);
    printChecksums(out, 'after', after);
    const identical = JSON.stringify(before) === JSON.stringify(after);
    const eventsPerSecond = Math.round(reached / Math.max(seconds, 0.001));
    out(`rebuilt ${reached} events in ${seconds.toFixed(2)} s (${eventsPerSecond} events/s)`);
    out(identical ? 'checksums: identical' : 'checksums: DIFFERENT');
    return { events: reached, seconds, eventsPerSecond, before, after, identical };
  });
}

/**
 * `rebuild --online`: new read tables are built beside the live ones while servers keep serving and
 * projecting, then swapped in by one short transaction (ProjectionRunner.rebuildOnline).
 */
export async function onlineRebuildCommand(
  config: Config,
  projections: readonly Projection[],
  out: Out,
  options: { only?: readonly string[]; batchSize?: number } = {},
): Promise<OnlineRebuildReport> {
  return withPlatform(config, projections, async (p) => {
    const head = await p.store.head();
    const started = Date.now();
    const report = await p.projections.rebuildOnline({
      only: options.only,
      batchSize: options.batchSize,
      onProgress: (position) => out(`rebuild --online: shadow tables at ${position}/${head.position}`),
    });
    const seconds = (Date.now() - started) / 1000;
    out(`rebuilt ${report.projections.join(', ')} online up to position ${report.reached} in ${seconds.toFixed(2)} s (${Math.round(report.reached / Math.max(seconds, 0.001))} events/s)`);
    out(`switch: ${report.tail} tail events folded, projection lock held ${report.switchMs} ms`);
    return report;
  });
}

export interface VerifyCommandOptions {
  /** A head hash exported earlier (`verify --head`). */
  expectedHead?: string;
  /** Public key files (PEM): check the signed ranges with them. */
  publicKeyFiles?: readonly string[];
  /** A file of kept heads, `position hash` per line. */
  headsFile?: string;
  /** Unsigned events tolerated after the last signed head (a running server's last batches). */
  tolerateUnsigned?: number;
}

/** The public keys of `--public-key` files. */
export function readPublicKeys(files: readonly string[]): KeyObject[] {
  return files.map((file) => parsePublicKey(readFileSync(file, 'utf8'), file));
}

function verifyOptionsOf(options: VerifyCommandOptions): VerifyOptions {
  return {
    expectedHead: options.expectedHead,
    publicKeys: options.publicKeyFiles?.length ? readPublicKeys(options.publicKeyFiles) : undefined,
    heads: options.headsFile ? parseKeptHeads(readFileSync(options.headsFile, 'utf8')) : undefined,
    tolerateUnsigned: options.tolerateUnsigned,
  };
}

export async function verifyCommand(config: Config, projections: readonly Projection[], out: Out, input: string | VerifyCommandOptions = {}): Promise<boolean> {
  const options = typeof input === 'string' ? { expectedHead: input } : input;
  // Read before the database opens: a bad key or heads file is the operator's mistake, said at once.
  const verifyOptions = verifyOptionsOf(options);
  return withPlatform(config, projections, async (p) => {
    const report = await verifyChain(p.db, verifyOptions);
    if (report.ok) {
      out(`ok: ${report.checked} events, chain intact`);
      out(`head position: ${report.headPosition}`);
      out(`head hash: ${report.headHash}`);
      // The line to keep in a heads file (verify --heads).
      out(`head: ${report.headPosition} ${report.headHash}`);
      if (options.expectedHead) out('the expected head is part of the chain');
      if (report.keptHeadsFound !== undefined) out(`kept heads: all ${report.keptHeadsFound} are in the chain`);
    } else {
      out(`BROKEN: ${report.reason}`);
      if (report.firstBrokenPosition !== undefined) out(`first broken position: ${report.firstBrokenPosition}`);
    }
    if (report.signatures) {
      const { checked, lastSignedPosition, unsignedTail } = report.signatures;
      out(`signatures: ${checked} verified; last signed position ${lastSignedPosition}; ${unsignedTail} unsigned events after it`);
    }
    return report.ok;
  });
}

/**
 * Signs committed rows no server signed (a batch left unsigned by a stop between its commit and its signature)
 * with the configured key; `tail` also signs the rows after the last signed range (only with every server
 * stopped: a running one may still be signing them). Returns the number of ranges signed.
 */
export async function signLogCommand(config: Config, projections: readonly Projection[], out: Out, options: { tail: boolean }): Promise<number> {
  if (!config.logSigningKey) throw new Error('sign-log needs the signing key: set LOG_SIGNING_KEY_FILE (or LOG_SIGNING_KEY)');
  const key = parseSigningKey(config.logSigningKey);
  return withPlatform(config, projections, async (p) => {
    const signed = await signUnsignedRanges(p.db, key, await readLogId(p.db), options);
    for (const range of signed) out(`signed positions ${range.from_position}-${range.position} (head ${range.hash})`);
    out(signed.length === 0 ? 'nothing to sign' : `signed ${signed.length} range(s) with key ${key.keyId}`);
    return signed.length;
  });
}

/** A new Ed25519 key pair for LOG_SIGNING_KEY_FILE; the private key file is readable by its owner only. */
export function generateLogKeyCommand(out: Out, dir: string): { privateFile: string; publicFile: string; keyId: string } {
  const files = generateSigningKeyFiles(dir);
  out(`private key (keep off the database host's backups; set LOG_SIGNING_KEY_FILE to it): ${files.privateFile}`);
  out(`public key (give to verify --public-key): ${files.publicFile}`);
  out(`key id: ${files.keyId}`);
  return files;
}

/** The log as JSON lines, in position order, exactly as stored. */
export async function exportCommand(config: Config, projections: readonly Projection[], out: Out, file?: string): Promise<number> {
  return withPlatform(config, projections, async (p) => {
    const sink: NodeJS.WritableStream = file ? createWriteStream(file) : process.stdout;
    const count = await writeExport(p.db, sink);
    if (file) await new Promise<void>((resolve) => sink.end(resolve));
    if (file) out(`exported ${count} events to ${file}`);
    // The data keys that still exist go to a file of their own: an import takes them only when asked.
    if (file) out(`exported ${await writeKeyFile(p.db, keyFileOf(file))} data keys to ${keyFileOf(file)}`);
    // The signed ranges too, so the imported log can be checked against the same public key.
    if (file) out(`exported ${await writeSignatureFile(p.db, signatureFileOf(file))} signatures to ${signatureFileOf(file)}`);
    return count;
  });
}

// The server's organization exports (POST /export/realm) write the same file.
export { writeExport };

/** Loads an export into an empty database, checking the hash chain, then refolds the read tables. */
export async function importCommand(
  config: Config,
  projections: readonly Projection[],
  out: Out,
  file: string,
  keysFile?: string,
  options: { publicKeyFiles?: readonly string[] } = {},
): Promise<number> {
  const publicKeys = options.publicKeyFiles?.length ? readPublicKeys(options.publicKeyFiles) : undefined;
  const signaturesFile = signatureFileOf(file);
  if (publicKeys && !existsSync(signaturesFile)) throw new Error(`--public-key needs the export's signatures (${signaturesFile})`);
  return withPlatform(config, projections, async (p) => {
    const existing = await p.store.head();
    if (existing.position > 0) throw new Error('import needs an empty log; this database already has events');
    // One transaction: a log that does not verify is rolled back, never left behind to be served.
    const { count, report } = await p.db.transaction().execute(async (trx) => {
      await sql`SELECT pg_advisory_xact_lock(${APPEND_LOCK_KEY})`.execute(trx);
      let batch: Array<Record<string, unknown>> = [];
      let count = 0;
      const flush = async () => {
        if (batch.length === 0) return;
        await trx
          .insertInto('events')
          .values(batch.map((e) => ({ ...e, data: jsonText(e.data), metadata: jsonText(e.metadata) })) as never)
          .execute();
        count += batch.length;
        batch = [];
      };
      // Opened only now: lines read while the transaction began would be lost to the iterator.
      const lines = createInterface({ input: createReadStream(file), crlfDelay: Infinity });
      for await (const line of lines) {
        if (!line.trim()) continue;
        batch.push(JSON.parse(line) as Record<string, unknown>);
        if (batch.length >= 1_000) await flush();
      }
      await flush();
      const signatures = existsSync(signaturesFile) ? await readSignatureFile(trx, signaturesFile) : 0;
      // The chain, and every signed head against it (with the keys: every signature and the coverage too).
      const report = await verifyChain(trx, { publicKeys });
      if (!report.ok) throw new Error(`imported log does not verify: ${report.reason}; nothing was imported`);
      if (!publicKeys && signatures > 0) {
        const unchecked = await signedHeadsMismatch(trx);
        if (unchecked !== undefined) throw new Error(`imported log does not verify: the signed head at position ${unchecked} does not match the chain; nothing was imported`);
      }
      if (signatures > 0) out(`imported ${signatures} signatures${publicKeys ? ', all verified' : ' (give --public-key to check them)'}`);
      if (keysFile) out(`imported ${await readKeyFile(trx, keysFile)} data keys from ${keysFile}`);
      return { count, report };
    });
    // Identifier sequences continue after the highest imported ids.
    await p.projections.rebuild();
    for (const [seq, table] of [['user_id_seq', 'users'], ['stream_id_seq', 'streams'], ['user_group_id_seq', 'user_groups']] as const) {
      await sql`SELECT setval(${seq}, GREATEST((SELECT coalesce(max(id), 0) FROM ${sql.table(table)}), 1))`.execute(p.db);
    }
    out(`imported ${count} events; head hash ${report.headHash}`);
    return count;
  });
}

export async function createUserCommand(
  config: Config,
  projections: readonly Projection[],
  out: Out,
  input: { email: string; fullName: string; role: number; botType?: number; password?: string; zuliprc?: string },
): Promise<{ userId: number; apiKey: string }> {
  if (!ALL_ROLES.includes(input.role)) throw new Error(`role must be one of ${ALL_ROLES.join(', ')}`);
  const platform = await createPlatform(config, { projections, startWorkers: true });
  try {
    const org = await ensureOrganization(platform, { writeZuliprc: false, setup: 'full' });
    const meta = { actorId: null, realmId: org.realmId, client: 'cli', requestId: randomUUID(), now: new Date() };
    const created = await createUser(platform, meta, {
      email: input.email, full_name: input.fullName, role: input.role, bot_type: input.botType ?? null, password: input.password,
    });
    const file = writeZuliprc(config.dataDir, input.zuliprc ?? `zuliprc-${input.email.replace(/[^a-zA-Z0-9@._-]/g, '_')}`, input.email, created.api_key, config.externalUrl);
    out(`created user ${created.user_id} <${input.email}>; credentials written to ${file}`);
    return { userId: created.user_id, apiKey: created.api_key };
  } finally {
    await platform.close();
  }
}

/** Builds the read tables as they were at `until` (a position or an ISO time) into another, empty database. */
export async function replayCommand(
  config: Config,
  projections: readonly Projection[],
  out: Out,
  input: { until: string; database: string },
): Promise<ReplayReport> {
  const point = parseReplayPoint(input.until);
  const target = targetConfig(config, input.database);
  // The copied data keys stay wrapped by the source's KEK: the target opens them with it (see replayInto).
  const secret = configuredKekSecret(config);
  if (secret && !config.dataKeySecret && !target.databaseUrl) adoptKekFile(target.dataDir, parseKekSecret(secret));
  if (target.databaseUrl ? target.databaseUrl === config.databaseUrl : !config.databaseUrl && target.dataDir === config.dataDir) {
    throw new Error('--database must name another database than the source');
  }
  const source = await openReplaySource(config);
  try {
    return await replayInto(source.db, target, projections, point, out);
  } finally {
    await source.close();
  }
}

/** Brings a deactivated organization back: its users' API keys work again (their old event queues stay ended). */
export async function reactivateRealmCommand(config: Config, projections: readonly Projection[], out: Out): Promise<boolean> {
  const platform = await createPlatform(config, { projections, startWorkers: true });
  try {
    const realm = await getDefaultRealm(platform.db);
    if (!realm) throw new Error('no organization in this database');
    const meta = { actorId: null, realmId: realm.id, client: 'cli', requestId: randomUUID(), now: new Date() };
    const done = await reactivateRealm(platform, meta, realm.id);
    out(done ? `reactivated organization ${realm.string_id || realm.name} (${realm.url})` : `organization ${realm.string_id || realm.name} is not deactivated; nothing to do`);
    return done;
  } finally {
    await platform.close();
  }
}
