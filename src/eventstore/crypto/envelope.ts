import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/**
 * A personal value as stored in event data: AES-256-GCM under a data key, with a fresh 12-byte
 * nonce, bound to the event's id and the field's path (associated data) so a ciphertext copied
 * into another event or field does not decrypt.
 */
export interface Envelope {
  readonly $enc: 1;
  /** id of the data key in data_keys */
  readonly k: string;
  readonly iv: string;
  readonly ct: string;
  readonly tag: string;
}

/** What a reader sees in place of a value whose data key was destroyed. */
export const SHREDDED = '(shredded)';

export function isEnvelope(value: unknown): value is Envelope {
  return typeof value === 'object' && value !== null && (value as { $enc?: unknown }).$enc === 1
    && typeof (value as Envelope).k === 'string';
}

const associatedData = (eventId: string, path: string) => Buffer.from(`${eventId}/${path}`, 'utf8');

/** Encrypts any JSON value (its JSON text), so strings, nulls and lists round-trip alike. */
export function seal(key: Buffer, keyId: string, eventId: string, path: string, value: unknown): Envelope {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(associatedData(eventId, path));
  const ct = Buffer.concat([cipher.update(JSON.stringify(value), 'utf8'), cipher.final()]);
  return { $enc: 1, k: keyId, iv: iv.toString('base64'), ct: ct.toString('base64'), tag: cipher.getAuthTag().toString('base64') };
}

/** Decrypts an envelope; throws when the key, event id or path does not match (tampering or a moved value). */
export function open(key: Buffer, eventId: string, path: string, envelope: Envelope): unknown {
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(envelope.iv, 'base64'));
  decipher.setAAD(associatedData(eventId, path));
  decipher.setAuthTag(Buffer.from(envelope.tag, 'base64'));
  // Text in, text out: no intermediate buffers (every reader of the log opens every sealed value).
  const text = decipher.update(envelope.ct, 'base64', 'utf8') + decipher.final('utf8');
  return JSON.parse(text) as unknown;
}
