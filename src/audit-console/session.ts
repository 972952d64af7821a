import { createHmac } from 'node:crypto';
import { constantTimeEqual } from '../services/secrets.js';

/** Name of the console's session cookie. */
export const SESSION_COOKIE = 'audit_session';
/** A session lasts eight hours (a working day), then the auditor signs in again. */
export const SESSION_SECONDS = 8 * 60 * 60;

/**
 * A session is `<user id>.<expiry ms>.<mac>`, the MAC keyed with the user's API key. Nothing is
 * stored on the server, so the console writes nothing to the log and works through any replica;
 * regenerating the API key (or deactivating the user, or a role change that is checked on every
 * request) ends every session of that user at once.
 */
export function signSession(userId: number, apiKey: string, now: number): string {
  const body = `${userId}.${now + SESSION_SECONDS * 1000}`;
  return `${body}.${mac(apiKey, body)}`;
}

/** The user id a session cookie names, if well formed and unexpired; its MAC is checked by `sessionValid`. */
export function sessionUserId(cookie: string | undefined, now: number): number | undefined {
  if (!cookie) return undefined;
  const match = /^(\d{1,10})\.(\d{1,15})\.([0-9a-f]{64})$/.exec(cookie);
  if (!match) return undefined;
  if (Number(match[2]) <= now) return undefined;
  return Number(match[1]);
}

export function sessionValid(cookie: string, apiKey: string): boolean {
  const cut = cookie.lastIndexOf('.');
  return constantTimeEqual(mac(apiKey, cookie.slice(0, cut)), cookie.slice(cut + 1));
}

function mac(apiKey: string, body: string): string {
  return createHmac('sha256', `audit-console-session:${apiKey}`).update(body).digest('hex');
}
