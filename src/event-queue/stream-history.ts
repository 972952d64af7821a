import type { Db } from '../db/database.js';
import type { StoredEvent } from '../eventstore/types.js';
import { upcast } from '../eventstore/upcast.js';

/**
 * The state of one log stream as of `event`, folded from the stream's events up to and including
 * it: a translator that sends a whole list gets the list that event produced, however late a
 * queue reads it.
 */
export async function stateAsOf<State, E>(db: Db, event: StoredEvent, initial: State, evolve: (state: State, event: E) => State): Promise<State> {
  const history = await db
    .selectFrom('events')
    .select(['type', 'schema_version', 'data'])
    .where('stream_id', '=', event.stream_id)
    .where('stream_version', '<=', event.stream_version)
    .orderBy('stream_version')
    .execute();
  let state = initial;
  // Old events are folded in their current shape, as every other reader of the log sees them.
  for (const past of history) state = evolve(state, upcast(past as unknown as StoredEvent) as unknown as E);
  return state;
}
