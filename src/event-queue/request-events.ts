import type { Db } from '../db/database.js';
import { EVENT_COLUMNS, type EventMetadata, type StoredEvent } from '../eventstore/types.js';
import { upcast } from '../eventstore/upcast.js';
import { sameCommand } from './command-runs.js';

/** Rows looked at per step while finding where a request's events start and end; most have one or two. */
const PAGE = 16;

/**
 * The events of `types` that the request which recorded `event` recorded around it, in log order
 * (`event` among them when it is of those types). The real server sends one action's client events
 * in an order of its own across what our log keeps as separate events (a role change and the
 * role:fullmembers change it makes, a reactivated bot and its new owner); a translator that needs
 * the rest of its request reads it here. A request's events take consecutive positions and commit
 * together, so whoever reads one of them can read them all.
 */
export async function requestEvents(db: Db, event: StoredEvent, types: readonly string[]): Promise<StoredEvent[]> {
  const first = await edge(db, event, 'back');
  const last = await edge(db, event, 'forward');
  const rows = await db
    .selectFrom('events')
    .select([...EVENT_COLUMNS])
    .where('position', '>=', first)
    .where('position', '<=', last)
    .where('type', 'in', [...types])
    .orderBy('position')
    .execute();
  return rows.map((row) => (row.position === event.position ? event : upcast(row as unknown as StoredEvent)));
}

/** The first (last) position of the request's events, read by their metadata alone. */
async function edge(db: Db, event: StoredEvent, direction: 'back' | 'forward'): Promise<number> {
  let edgePosition = event.position;
  for (;;) {
    const rows = await db
      .selectFrom('events')
      .select(['position', 'metadata'])
      .where('position', direction === 'back' ? '<' : '>', edgePosition)
      .orderBy('position', direction === 'back' ? 'desc' : 'asc')
      .limit(PAGE)
      .execute();
    for (const row of rows) {
      if (!sameCommand(row.metadata as EventMetadata, event.metadata)) return edgePosition;
      edgePosition = row.position;
    }
    if (rows.length < PAGE) return edgePosition;
  }
}
