import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, sign, verify, type KeyObject } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Db } from '../db/database.js';

/**
 * Signed ranges of the log (issue 24 item 10). The chain alone is forgeable by whoever can write
 * the table: nothing in a link is secret. A server holding an Ed25519 key the database never sees
 * signs, after each committed batch, the range of positions it appended and the chain hash at its
 * end. A row appended by anyone else lies in no signed range; a row edited breaks the signed hash.
 */
export interface SigningKey {
  privateKey: KeyObject;
  publicKey: KeyObject;
  keyId: string;
}

/** A row of log_signatures. */
export interface SignedRange {
  from_position: number;
  position: number;
  hash: string;
  log_id: string;
  key_id: string;
  signature: string;
  signed_at: string;
}

/** The fingerprint of a public key: SHA-256 of its DER (SubjectPublicKeyInfo) form, hex. */
export function keyIdOf(publicKey: KeyObject): string {
  return createHash('sha256').update(publicKey.export({ type: 'spki', format: 'der' })).digest('hex');
}

/** The private key of LOG_SIGNING_KEY (PEM); refuses anything but Ed25519. */
export function parseSigningKey(pem: string): SigningKey {
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey(pem);
  } catch (error) {
    throw new Error(`the log signing key is not a PEM private key: ${(error as Error).message}`);
  }
  if (privateKey.asymmetricKeyType !== 'ed25519') throw new Error(`the log signing key must be Ed25519, not ${privateKey.asymmetricKeyType}`);
  const publicKey = createPublicKey(privateKey);
  return { privateKey, publicKey, keyId: keyIdOf(publicKey) };
}

/** A public key file (PEM) given to verify or import. */
export function parsePublicKey(pem: string, name: string): KeyObject {
  let key: KeyObject;
  try {
    key = createPublicKey(pem);
  } catch (error) {
    throw new Error(`${name} is not a PEM public key: ${(error as Error).message}`);
  }
  if (key.asymmetricKeyType !== 'ed25519') throw new Error(`${name} must be an Ed25519 key, not ${key.asymmetricKeyType}`);
  return key;
}

/** What is signed: the log, the range and the chain hash at its end, in a form nothing else has. */
export function signedBytes(range: Pick<SignedRange, 'log_id' | 'from_position' | 'position' | 'hash'>): Buffer {
  return Buffer.from(`chat-log-range/1\n${range.log_id}\n${range.from_position}\n${range.position}\n${range.hash}\n`, 'utf8');
}

export function signRange(key: SigningKey, range: Pick<SignedRange, 'log_id' | 'from_position' | 'position' | 'hash'>): string {
  return sign(null, signedBytes(range), key.privateKey).toString('base64');
}

export function rangeSignatureValid(publicKey: KeyObject, range: SignedRange): boolean {
  try {
    return verify(null, signedBytes(range), publicKey, Buffer.from(range.signature, 'base64'));
  } catch {
    return false;
  }
}

/** A new key pair in `dir`: the private key readable by its owner only. */
export function generateSigningKeyFiles(dir: string, name = 'log-signing-key'): { privateFile: string; publicFile: string; keyId: string } {
  mkdirSync(dir, { recursive: true });
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const privateFile = path.join(dir, `${name}.pem`);
  const publicFile = path.join(dir, `${name}.pub.pem`);
  // 'wx': never overwrite a key that may still be signing a log.
  writeFileSync(privateFile, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600, flag: 'wx' });
  writeFileSync(publicFile, publicKey.export({ type: 'spki', format: 'pem' }), { mode: 0o644, flag: 'wx' });
  return { privateFile, publicFile, keyId: keyIdOf(publicKey) };
}

interface Range {
  from: number;
  to: number;
  hash: string;
}

/**
 * Signs what this process appended, off the append path: a committed batch only queues its range.
 * While one INSERT is on its way, the ranges that follow queue up, and contiguous ones (no other
 * writer in between) merge into one signature; so at most one signature per batch, fewer under load.
 */
export class HeadSigner {
  private pending: Range[] = [];
  private running: Promise<void> | undefined;
  /** The last error writing signatures (they are retried with the next batch). */
  lastError: unknown;
  signed = 0;
  /** Failed attempts to store signatures (each is retried with the next batch). */
  failures = 0;
  /**
   * Told of a failure once per distinct error message until a write succeeds again: the retry of every
   * batch would otherwise repeat the same line for as long as the database refuses.
   */
  onFailure?: (error: unknown, unsignedRanges: number) => void;
  private reported: string | undefined;

  constructor(
    private readonly db: Db,
    private readonly key: SigningKey,
    private readonly logId: string,
  ) {}

  get keyId(): string {
    return this.key.keyId;
  }

  /** Ranges committed and not signed yet. */
  get unsignedRanges(): number {
    return this.pending.length;
  }

  /** A committed batch: positions from..to, chain hash `hash` at `to`. */
  add(from: number, to: number, hash: string): void {
    const last = this.pending[this.pending.length - 1];
    if (last && last.to + 1 === from) {
      last.to = to;
      last.hash = hash;
    } else {
      this.pending.push({ from, to, hash });
    }
    this.running ??= this.drain().finally(() => {
      this.running = undefined;
    });
  }

  /** Resolves once every range queued so far is signed and stored (or failed: see lastError). */
  async flush(): Promise<void> {
    while (this.running) await this.running;
  }

  private async drain(): Promise<void> {
    while (this.pending.length > 0) {
      const ranges = this.pending;
      this.pending = [];
      const signedAt = new Date().toISOString();
      const rows = ranges.map((range) => {
        const row = { from_position: range.from, position: range.to, hash: range.hash, log_id: this.logId, key_id: this.key.keyId };
        return { ...row, signature: signRange(this.key, row), signed_at: signedAt };
      });
      try {
        await this.db.insertInto('log_signatures').values(rows).execute();
        this.signed += rows.length;
        this.reported = undefined;
      } catch (error) {
        // Tried again with the next batch; if the process ends first, verify reports the range unsigned
        // (and `sign-log` can sign it).
        this.lastError = error;
        this.failures += 1;
        this.pending = [...ranges, ...this.pending];
        const message = error instanceof Error ? error.message : String(error);
        if (message !== this.reported) {
          this.reported = message;
          this.onFailure?.(error, this.pending.length);
        }
        return;
      }
    }
  }
}
