import type { Db } from '../db/database.js';
import { EVENT_COLUMNS, type StoredEvent } from '../eventstore/types.js';
import { upcast } from '../eventstore/upcast.js';
import { sameCommand } from './command-runs.js';

const PAGE = 64;

/**
 * The events of `types` that the request which recorded `event` recorded around it, in log order
 * (`event` among them when it is of those types). The real server sends one action's client events
 * in an order of its own across what our log keeps as separate events (a role change and the
 * role:fullmembers change it makes, a reactivated bot and its new owner); a translator that needs
 * the rest of its request reads it here. A request's events take consecutive positions and commit
 * together, so whoever reads one of them can read them all.
 */
export async function requestEvents(db: Db, event: StoredEvent, types: readonly string[]): Promise<StoredEvent[]> {
  const wanted = new Set(types);
  const before = await walk(db, event, 'back');
  const after = await walk(db, event, 'forward');
  return [...before.reverse(), event, ...after].filter((e) => wanted.has(e.type));
}

/** Every event of the request on one side of `event`, nearest first. */
async function walk(db: Db, event: StoredEvent, direction: 'back' | 'forward'): Promise<StoredEvent[]> {
  const out: StoredEvent[] = [];
  let from = event.position;
  for (;;) {
    const rows = await db
      .selectFrom('events')
      .select([...EVENT_COLUMNS])
      .where('position', direction === 'back' ? '<' : '>', from)
      .orderBy('position', direction === 'back' ? 'desc' : 'asc')
      .limit(PAGE)
      .execute();
    for (const row of rows) {
      const stored = row as unknown as StoredEvent;
      if (!sameCommand(stored.metadata, event.metadata)) return out;
      out.push(upcast(stored));
      from = stored.position;
    }
    if (rows.length < PAGE) return out;
  }
}
