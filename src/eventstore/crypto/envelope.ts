import { createCipheriv, createDecipheriv } from 'node:crypto';
import { randomSlice } from './random-pool.js';

/**
 * A personal value as stored in event data (format 1): AES-256-GCM under a data key, with a fresh
 * 12-byte nonce, bound to the event's id and the field's path (associated data) so a ciphertext
 * copied into another event or field does not decrypt.
 */
export interface ValueEnvelope {
  readonly $enc: 1;
  /** id of the data key in data_keys */
  readonly k: string;
  readonly iv: string;
  readonly ct: string;
  readonly tag: string;
}

/**
 * Format 2: every sealed value of one event in one ciphertext (one decipher per event for its
 * readers instead of one per value: a rebuild opens every event of the log). The head, stored at
 * the first sealed field, carries the values of `paths` in that order, with a fresh nonce and the
 * event's id and those paths as associated data; each other sealed field holds a reference naming
 * the key and the head's path. A value is taken only from a head that authenticated its path.
 */
export interface BundleHead {
  readonly $enc: 2;
  readonly k: string;
  readonly paths: readonly string[];
  readonly iv: string;
  readonly ct: string;
  readonly tag: string;
}

export interface BundleRef {
  readonly $enc: 2;
  readonly k: string;
  /** Path of the head holding this field's value. */
  readonly at: string;
}

export type Envelope = ValueEnvelope | BundleHead | BundleRef;

/** What a reader sees in place of a value whose data key was destroyed. */
export const SHREDDED = '(shredded)';

export function isEnvelope(value: unknown): value is Envelope {
  if (typeof value !== 'object' || value === null) return false;
  const { $enc, k } = value as { $enc?: unknown; k?: unknown };
  return ($enc === 1 || $enc === 2) && typeof k === 'string';
}

export function isBundleHead(envelope: Envelope): envelope is BundleHead {
  return envelope.$enc === 2 && Array.isArray((envelope as BundleHead).paths);
}

const associatedData = (eventId: string, path: string) => Buffer.from(`${eventId}/${path}`, 'utf8');
// A newline is in no field path; the prefix keeps a bundle's label apart from any one field's.
const bundleLabel = (paths: readonly string[]) => `bundle:${paths.join('\n')}`;

/** Seals `entries` (concrete path → value, in order) of one event into one bundle head. */
export function sealBundle(key: Buffer, keyId: string, eventId: string, entries: ReadonlyArray<readonly [string, unknown]>): BundleHead {
  const paths = entries.map(([path]) => path);
  const { iv, ct, tag } = seal(key, keyId, eventId, bundleLabel(paths), entries.map(([, value]) => value));
  return { $enc: 2, k: keyId, paths, iv, ct, tag };
}

/** The values of a bundle head by path; throws when the key, event id or paths do not match. */
export function openBundle(key: Buffer, eventId: string, head: BundleHead): Map<string, unknown> {
  if (!head.paths.every((path) => typeof path === 'string')) throw new Error('malformed bundle');
  const values = open(key, eventId, bundleLabel(head.paths), { $enc: 1, k: head.k, iv: head.iv, ct: head.ct, tag: head.tag });
  if (!Array.isArray(values) || values.length !== head.paths.length) throw new Error('malformed bundle');
  return new Map(head.paths.map((path, i) => [path, values[i]]));
}

/** Encrypts any JSON value (its JSON text), so strings, nulls and lists round-trip alike. */
export function seal(key: Buffer, keyId: string, eventId: string, path: string, value: unknown): ValueEnvelope {
  const iv = randomSlice(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(associatedData(eventId, path));
  const body = cipher.update(JSON.stringify(value), 'utf8');
  // GCM is a stream mode: final() adds no bytes, only the tag (no copy of the body to join it).
  const rest = cipher.final();
  const ct = rest.length === 0 ? body : Buffer.concat([body, rest]);
  return { $enc: 1, k: keyId, iv: iv.toString('base64'), ct: ct.toString('base64'), tag: cipher.getAuthTag().toString('base64') };
}

/** Decrypts an envelope; throws when the key, event id or path does not match (tampering or a moved value). */
export function open(key: Buffer, eventId: string, path: string, envelope: ValueEnvelope): unknown {
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(envelope.iv, 'base64'));
  decipher.setAAD(associatedData(eventId, path));
  decipher.setAuthTag(Buffer.from(envelope.tag, 'base64'));
  // Text in, text out: no intermediate buffers (every reader of the log opens every sealed value).
  const text = decipher.update(envelope.ct, 'base64', 'utf8') + decipher.final('utf8');
  return JSON.parse(text) as unknown;
}
