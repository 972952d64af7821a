import type { Db } from '../db/database.js';
import type { StoredEvent } from '../eventstore/types.js';
import type { UserRow } from '../read/users.js';
import type { RealmRow } from '../read/realm.js';

export type ClientEvent = Record<string, unknown> & { type: string };

/** What a queue asked for at registration. */
export interface QueueOptions {
  apply_markdown: boolean;
  client_gravatar: boolean;
  slim_presence: boolean;
  all_public_streams: boolean;
  include_subscribers: boolean;
  client_capabilities: Record<string, boolean>;
  narrow: unknown[];
  event_types: string[] | null;
}

export interface Recipient {
  user: UserRow;
  realm: RealmRow;
  queue: QueueOptions;
  queueId: string;
}

/** A log event made ready once for every queue: who may get it, and what each of them gets. */
export interface PreparedEvent {
  /** 'realm': every user of the realm may get it (forUser still decides); else the user ids. */
  audience: 'realm' | ReadonlySet<number>;
  forUser(recipient: Recipient): ClientEvent[];
}

export type Translator = (event: StoredEvent, db: Db) => Promise<PreparedEvent | null>;

/**
 * A run translator sees every event of a command's run at once (see command-runs.ts) and answers
 * for the whole run; `maxPerRecipient` bounds how many client events it gives any one queue, so
 * the run's ids can be laid out before anyone asks.
 */
export type RunTranslator = (run: readonly StoredEvent[], db: Db) => Promise<(PreparedEvent & { maxPerRecipient: number }) | null>;

/** The log around an event, as translators of runs need it. */
export interface RunReader {
  /** The run `event` belongs to, in log order (at least the event itself). */
  runOf(event: StoredEvent): Promise<readonly StoredEvent[]>;
  /** `translate` once per run and key, shared by every position of the run. */
  memo<T>(run: readonly StoredEvent[], key: string, translate: () => Promise<T>): Promise<T>;
}
