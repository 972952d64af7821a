import { createHmac } from 'node:crypto';
import type { Db } from '../db/database.js';
import { getUserById, type UserRow } from '../read/users.js';
import { constantTimeEqual } from './secrets.js';

/** How long a temporary upload URL works: the real server's signed access tokens last 60 s. */
export const TEMPORARY_URL_SECONDS = 60;

const signature = (apiKey: string, payload: string) => createHmac('sha256', apiKey).update(`user-uploads:${payload}`).digest('hex');

/**
 * "/user_uploads/temporary/<token>/<file name>". The token (hex, like the real server's) carries
 * the path, the user who asked and the expiry, signed with that user's API key: any replica can
 * check it without shared state, nobody else can forge it, and regenerating the key revokes it.
 */
export function temporaryUploadUrl(user: Pick<UserRow, 'id' | 'api_key'>, pathId: string, nowMs: number): string {
  const payload = JSON.stringify([pathId, user.id, Math.floor(nowMs / 1000) + TEMPORARY_URL_SECONDS]);
  const token = Buffer.from(`${payload}\n${signature(user.api_key, payload)}`).toString('hex').toUpperCase();
  const fileName = pathId.split('/').pop()!;
  return `/user_uploads/temporary/${token}/${encodeURIComponent(fileName)}`;
}

/** The path and the user a token was made for, when it is genuine and not expired. */
export async function readTemporaryUploadToken(db: Db, token: string, nowMs: number): Promise<{ pathId: string; user: UserRow } | null> {
  if (!/^(?:[0-9A-F]{2})+$/.test(token) || token.length > 8192) return null;
  const [payload, signed] = Buffer.from(token, 'hex').toString('utf8').split('\n');
  if (payload === undefined || signed === undefined) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(payload);
  } catch {
    return null;
  }
  if (!Array.isArray(parsed) || parsed.length !== 3) return null;
  const [pathId, userId, expires] = parsed as unknown[];
  if (typeof pathId !== 'string' || !Number.isInteger(userId) || !Number.isInteger(expires)) return null;
  if ((expires as number) < nowMs / 1000 || (userId as number) <= 0 || (userId as number) > 2_147_483_647) return null;
  const user = await getUserById(db, userId as number);
  if (!user || !user.is_active || !constantTimeEqual(signed, signature(user.api_key, payload))) return null;
  return { pathId, user };
}
