import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import type { Db } from '../../db/database.js';
import { randomSlice } from './random-pool.js';

/**
 * The key-encryption key (KEK) wraps every data key. Format 1: AES-256-GCM under a 32-byte
 * secret held by the operator. A KMS would be format 2: the wrapped bytes are then the KMS's
 * ciphertext blob, and unwrapping is one KMS Decrypt call (see docs/FORGETTING.md).
 */
export const KEK_FORMAT = 1;
export const KEK_FILE_NAME = 'data-key-secret';
const CHECK_PLAINTEXT = 'zulip-es key-encryption key check';

export class KekError extends Error {}

export interface Kek {
  readonly key: Buffer;
  /** Where it came from, for the start-up log line. */
  readonly source: 'environment' | 'data-dir' | 'generated' | 'ephemeral';
}

/** 64 hex digits or base64 of exactly 32 bytes. */
export function parseKekSecret(text: string): Buffer {
  const trimmed = text.trim();
  const key = /^[0-9a-fA-F]{64}$/.test(trimmed) ? Buffer.from(trimmed, 'hex') : Buffer.from(trimmed, 'base64');
  if (key.length !== 32 || (!/^[0-9a-fA-F]{64}$/.test(trimmed) && key.toString('base64').replace(/=+$/, '') !== trimmed.replace(/=+$/, ''))) {
    throw new KekError('DATA_KEY_SECRET must be 32 random bytes, written as 64 hex digits or as base64 (e.g. `openssl rand -hex 32`)');
  }
  return key;
}

export function wrapWithKek(kek: Buffer, label: string, plaintext: Buffer): string {
  const iv = randomSlice(12);
  const cipher = createCipheriv('aes-256-gcm', kek, iv);
  cipher.setAAD(Buffer.from(label, 'utf8'));
  const ct = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), ct]).toString('base64');
}

export function unwrapWithKek(kek: Buffer, label: string, wrapped: string): Buffer {
  const bytes = Buffer.from(wrapped, 'base64');
  const decipher = createDecipheriv('aes-256-gcm', kek, bytes.subarray(0, 12));
  decipher.setAAD(Buffer.from(label, 'utf8'));
  decipher.setAuthTag(bytes.subarray(12, 28));
  return Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()]);
}

async function storedCheck(db: Db): Promise<string | undefined> {
  const { rows } = await sql<{ check_value: string }>`SELECT check_value FROM data_key_check WHERE id = 1`.execute(db);
  return rows[0]?.check_value;
}

/** The configured KEK secret, or the one generated into DATA_DIR: what another database built from this log needs. */
export function configuredKekSecret(config: { dataKeySecret?: string; dataDir: string }): string | undefined {
  if (config.dataKeySecret) return config.dataKeySecret;
  const file = path.join(config.dataDir, KEK_FILE_NAME);
  return existsSync(file) ? readFileSync(file, 'utf8').trim() : undefined;
}

/**
 * Gives an embedded database directory the KEK of the log it is built from (replay), unless it has
 * one: its copied data keys are wrapped by that KEK, and `DATA_DIR=<dir> npm start` must open them.
 */
export function adoptKekFile(dataDir: string, key: Buffer): void {
  const file = path.join(dataDir, KEK_FILE_NAME);
  if (existsSync(file)) return;
  mkdirSync(dataDir, { recursive: true });
  writeFileSync(file, `${key.toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
}

export interface KekSource {
  /** DATA_KEY_SECRET, or the contents of DATA_KEY_SECRET_FILE. */
  secret?: string;
  /** Embedded database directory: where a generated KEK is kept. */
  dataDir?: string;
  /** A database that lives only in memory (tests): a fresh KEK is fine. */
  ephemeral: boolean;
  /** Printed once when a KEK is generated. */
  warn?: (line: string) => void;
}

/**
 * Finds the KEK and checks it against the value stored in the database at first start, so a wrong
 * or missing KEK is a refusal to start, never a server that writes what it cannot read back.
 */
export async function loadKek(db: Db, source: KekSource): Promise<Kek> {
  const check = await storedCheck(db);
  let kek: Kek;
  if (source.secret !== undefined && source.secret.trim() !== '') {
    kek = { key: parseKekSecret(source.secret), source: 'environment' };
  } else if (source.dataDir) {
    const file = path.join(source.dataDir, KEK_FILE_NAME);
    if (existsSync(file)) kek = { key: parseKekSecret(readFileSync(file, 'utf8')), source: 'data-dir' };
    else if (check !== undefined) {
      throw new KekError(`the key-encryption key is missing: this database's data keys were wrapped by a key that was in ${file}; restore that file or set DATA_KEY_SECRET`);
    } else {
      kek = generateKekFile(file, source.warn ?? console.warn);
    }
  } else if (source.ephemeral) {
    kek = { key: randomBytes(32), source: 'ephemeral' };
  } else {
    throw new KekError('no key-encryption key: set DATA_KEY_SECRET (or DATA_KEY_SECRET_FILE)');
  }
  if (check === undefined) {
    await sql`INSERT INTO data_key_check (id, format, check_value) VALUES (1, ${KEK_FORMAT}, ${wrapWithKek(kek.key, 'kek-check', Buffer.from(CHECK_PLAINTEXT))})
      ON CONFLICT (id) DO NOTHING`.execute(db);
    const stored = await storedCheck(db);
    if (stored !== undefined) verifyCheck(kek.key, stored);
  } else verifyCheck(kek.key, check);
  return kek;
}

/** A new KEK in DATA_DIR; a replica that started at the same moment and wrote it first wins. */
function generateKekFile(file: string, warn: (line: string) => void): Kek {
  const key = randomBytes(32);
  mkdirSync(path.dirname(file), { recursive: true });
  try {
    writeFileSync(file, `${key.toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    return { key: parseKekSecret(readFileSync(file, 'utf8')), source: 'data-dir' };
  }
  warn(`generated the key-encryption key in ${file}: BACK IT UP (or move it to DATA_KEY_SECRET). Without it nothing personal in the log can be read again.`);
  return { key, source: 'generated' };
}

function verifyCheck(key: Buffer, check: string): void {
  let plain: string;
  try {
    plain = unwrapWithKek(key, 'kek-check', check).toString('utf8');
  } catch {
    plain = '';
  }
  if (plain !== CHECK_PLAINTEXT) {
    throw new KekError('wrong key-encryption key: DATA_KEY_SECRET (or the data-key-secret file) is not the key this database was set up with; refusing to start');
  }
}
