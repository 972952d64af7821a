import type { Db } from '../db/database.js';
import type { StoredEvent } from '../eventstore/types.js';

/**
 * The state of one log stream as of `event`, folded from the stream's events up to and including
 * it: a translator that sends a whole list gets the list that event produced, however late a
 * queue reads it.
 */
export async function stateAsOf<State, E>(db: Db, event: StoredEvent, initial: State, evolve: (state: State, event: E) => State): Promise<State> {
  const history = await db
    .selectFrom('events')
    .select(['type', 'data'])
    .where('stream_id', '=', event.stream_id)
    .where('stream_version', '<=', event.stream_version)
    .orderBy('stream_version')
    .execute();
  let state = initial;
  for (const past of history) state = evolve(state, past as unknown as E);
  return state;
}
