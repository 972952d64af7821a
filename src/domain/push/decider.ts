import { errors } from '../errors.js';
import { assertNever } from '../event-types.js';
import type { PushEvent } from './events.js';

export const MAX_TOKEN_LENGTH = 4096;
// APNs tokens are hex, FCM registration ids use letters, digits, ':', '_' and '-'.
const TOKEN_FORM = /^[A-Za-z0-9:_.-]+$/;
const APPID_FORM = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

export interface PushState {
  user_id: number;
  tokens: readonly string[];
}

export type PushCommand =
  | { type: 'RegisterPushDevice'; token: string; appid: string; now: number }
  | { type: 'RemovePushDevice'; token: string };

export function validateToken(token: string): void {
  if (token.length === 0 || token.length > MAX_TOKEN_LENGTH) throw errors.badRequest('Empty or invalid length token');
  if (!TOKEN_FORM.test(token)) throw errors.badRequest('Invalid push token');
}

/** Pure: a command on one user's push devices gives the events to record, or a catalog error. */
export function decidePush(command: PushCommand, state: PushState): PushEvent[] {
  validateToken(command.token);
  switch (command.type) {
    case 'RegisterPushDevice':
      if (!APPID_FORM.test(command.appid)) throw errors.badRequest('Invalid app ID');
      return [{ type: 'PushDeviceRegistered', data: { user_id: state.user_id, token: command.token, appid: command.appid, time: command.now } }];
    case 'RemovePushDevice':
      if (!state.tokens.includes(command.token)) throw errors.badRequest('Token does not exist');
      return [{ type: 'PushDeviceRemoved', data: { user_id: state.user_id, token: command.token } }];
    default:
      return assertNever(command);
  }
}
