import { sql } from 'kysely';
import type { Db } from '../db/database.js';

export interface ProjectionLag {
  projection: string;
  position: number;
  /** Events in the log after the projection's checkpoint. */
  events: number;
  /** Age of the oldest event the projection has not folded yet (0 when caught up). */
  seconds: number;
}

/**
 * Lag of every checkpointed projection behind the log head, read from the database so it is the
 * same whichever node answers. Ages use the database clock on both sides (recorded_at and now()).
 */
export async function projectionLags(db: Db): Promise<{ head: number; lags: ProjectionLag[] }> {
  const { rows } = await sql<{ name: string; position: number; head: number; age: number | null }>`
    SELECT c.name, c.position::int8 AS position, h.head::int8 AS head,
           (SELECT extract(epoch FROM now() - e.recorded_at)::float8 FROM events e
            WHERE e.position > c.position ORDER BY e.position LIMIT 1) AS age
    FROM checkpoints c, (SELECT coalesce(max(position), 0) AS head FROM events) h
    ORDER BY c.name`.execute(db);
  const head = rows.length > 0 ? Number(rows[0]!.head) : await logHead(db);
  return {
    head,
    lags: rows.map((r) => ({
      projection: r.name,
      position: Number(r.position),
      events: Math.max(0, head - Number(r.position)),
      seconds: Math.max(0, Number(r.age ?? 0)),
    })),
  };
}

export async function logHead(db: Db): Promise<number> {
  const { rows } = await sql<{ head: number }>`SELECT coalesce(max(position), 0)::int8 AS head FROM events`.execute(db);
  return Number(rows[0]!.head);
}

/** How far `position` (what this process's read tables have reached) is behind the log. */
export async function lagBehind(db: Db, position: number): Promise<{ head: number; events: number; seconds: number }> {
  const { rows } = await sql<{ head: number; age: number | null }>`
    SELECT (SELECT coalesce(max(position), 0) FROM events)::int8 AS head,
           (SELECT extract(epoch FROM now() - e.recorded_at)::float8 FROM events e
            WHERE e.position > ${position} ORDER BY e.position LIMIT 1) AS age`.execute(db);
  const head = Number(rows[0]!.head);
  return { head, events: Math.max(0, head - position), seconds: Math.max(0, Number(rows[0]!.age ?? 0)) };
}
