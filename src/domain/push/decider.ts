import { errors } from '../errors.js';
import { assertNever } from '../event-types.js';
import type { PushEvent, PushTokenKind } from './events.js';

export const MAX_TOKEN_LENGTH = 4096;
// APNs tokens are hex, FCM registration ids use letters, digits, ':', '_' and '-'.
const TOKEN_FORM = /^[A-Za-z0-9:_.-]+$/;
const APPID_FORM = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

// The real server's app id check for APNs registrations.
const APNS_APPID_FORM = /^[.a-zA-Z0-9-]+$/;

export interface PushState {
  user_id: number;
  tokens: readonly { token: string; kind: string | null }[];
}

export type PushCommand =
  | { type: 'RegisterPushDevice'; token: string; appid: string; now: number }
  | { type: 'RemovePushDevice'; token: string }
  | { type: 'RegisterKindToken'; kind: PushTokenKind; token: string; appid: string; now: number }
  | { type: 'RemoveKindToken'; kind: PushTokenKind; token: string };

/**
 * The real server's token checks on the per-service routes: a length check for both, and for APNs
 * that the token decodes as base64 the lenient way Python's b64decode does (characters outside the
 * alphabet are skipped; what is left must not leave a dangling sextet or be short of padding).
 */
export function validateKindToken(token: string, kind: PushTokenKind): void {
  if (token.length === 0 || token.length > MAX_TOKEN_LENGTH) throw errors.badRequest('Empty or invalid length token');
  if (kind === 'apns' && !decodesAsLenientBase64(token)) throw errors.badRequest('Invalid APNS token');
}

function decodesAsLenientBase64(text: string): boolean {
  const kept = text.replace(/[^A-Za-z0-9+/=]/g, '');
  const firstPad = kept.indexOf('=');
  const data = firstPad === -1 ? kept : kept.slice(0, firstPad);
  const padding = firstPad === -1 ? 0 : kept.length - firstPad;
  const rest = data.length % 4;
  if (rest === 1) return false;
  return rest === 0 || padding >= 4 - rest;
}

export function validateToken(token: string): void {
  if (token.length === 0 || token.length > MAX_TOKEN_LENGTH) throw errors.badRequest('Empty or invalid length token');
  if (!TOKEN_FORM.test(token)) throw errors.badRequest('Invalid push token');
}

/** Pure: a command on one user's push devices gives the events to record, or a catalog error. */
export function decidePush(command: PushCommand, state: PushState): PushEvent[] {
  const user_id = state.user_id;
  switch (command.type) {
    case 'RegisterPushDevice':
      validateToken(command.token);
      if (!APPID_FORM.test(command.appid)) throw errors.badRequest('Invalid app ID');
      return [{ type: 'PushDeviceRegistered', data: { user_id, token: command.token, appid: command.appid, time: command.now } }];
    case 'RemovePushDevice':
      validateToken(command.token);
      if (!state.tokens.some((t) => t.token === command.token)) throw errors.badRequest('Token does not exist');
      return [{ type: 'PushDeviceRemoved', data: { user_id, token: command.token } }];
    case 'RegisterKindToken':
      if (command.kind === 'apns' && !APNS_APPID_FORM.test(command.appid)) throw errors.badRequest('appid has invalid format');
      validateKindToken(command.token, command.kind);
      // Registering a token again changes nothing: the first registration (and its app id) stands.
      if (state.tokens.some((t) => t.token === command.token && t.kind === command.kind)) return [];
      return [{ type: 'PushDeviceRegistered', data: { user_id, token: command.token, appid: command.appid, time: command.now, kind: command.kind } }];
    case 'RemoveKindToken':
      validateKindToken(command.token, command.kind);
      // As the real server: the token must be this user's and of this kind.
      if (!state.tokens.some((t) => t.token === command.token && t.kind === command.kind)) throw errors.badRequest('Token does not exist');
      return [{ type: 'PushDeviceRemoved', data: { user_id, token: command.token } }];
    default:
      return assertNever(command);
  }
}
