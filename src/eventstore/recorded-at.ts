import { sql } from 'kysely';

/**
 * recorded_at is part of a version 2 row's hash, so the application chooses it (not now() in the
 * database) and both sides write it the same way: UTC, microseconds, `2026-01-02T03:04:05.678901Z`.
 * timestamptz keeps microseconds exactly, in PostgreSQL and PGlite alike, and RECORDED_AT_TEXT reads
 * them back in this form whatever the session's time zone; a JavaScript Date would drop them.
 */
export const RECORDED_AT_TEXT = sql<string>`to_char(recorded_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

let last = 0;

/**
 * Now, in microseconds since the epoch, strictly increasing within this process: every batch
 * gets its own recorded_at, as every transaction had its own now() before.
 */
export function nextRecordedAt(): string {
  // The wall clock has milliseconds; the monotonic clock fills in the microseconds below them.
  const now = Date.now() * 1000 + Number((process.hrtime.bigint() / 1000n) % 1000n);
  last = Math.max(now, last + 1);
  return microsecondsText(last);
}

export function microsecondsText(micros: number): string {
  const millis = Math.floor(micros / 1000);
  const iso = new Date(millis).toISOString();
  return `${iso.slice(0, 23)}${String(micros % 1000).padStart(3, '0')}Z`;
}
