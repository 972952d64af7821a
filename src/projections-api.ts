import type { Transaction } from 'kysely';
import type { Database } from './db/schema.js';
import type { StoredEvent } from './eventstore/types.js';

export type Trx = Transaction<Database>;

/**
 * What a projection's folds may remember from one pass to the next, to skip a statement whose
 * outcome they already know (a fact about rows as its own folds left them). The runner keeps a
 * projection's memory only while it can prove that nothing else changed the read tables since its
 * last pass (its checkpoint claim did), forgets it otherwise, and drops what a pass wrote to it
 * when the pass does not commit. A fold must give the same rows with an empty memory.
 */
export interface FoldMemory {
  get(key: string): unknown;
  set(key: string, value: unknown): void;
  delete(key: string): void;
}

/** A memory that remembers nothing (rebuilds, and callers that fold events one-off). */
export const noFoldMemory: FoldMemory = { get: () => undefined, set: () => undefined, delete: () => undefined };

/**
 * A projection folds events into the read tables it owns. It must be a pure function of the log:
 * applying the same events to empty tables always gives the same rows (rebuild relies on it).
 */
export interface Projection {
  readonly name: string;
  /** Bump when the fold changes: the runner then rebuilds this projection from the log. */
  readonly version: number;
  readonly tables: readonly string[];
  /** Indexes of its tables that only queries use, never its folds: a full rebuild builds them after folding. */
  readonly queryIndexes?: readonly string[];
  readonly handles: ReadonlySet<string>;
  /** Folds one event; false when it left the read tables as they were (caches keyed on them stay valid). */
  apply(trx: Trx, event: StoredEvent, memory?: FoldMemory): Promise<boolean | void>;
  /** Event types `applyRun` folds a run of in one go. */
  readonly bulkTypes?: ReadonlySet<string>;
  /**
   * Folds consecutive events of one type (from `bulkTypes`) exactly as `apply` on each in turn
   * would; false when none of them changed the read tables.
   */
  applyRun?(trx: Trx, events: readonly StoredEvent[], memory?: FoldMemory): Promise<boolean | void>;
  /**
   * For an event of a type this projection folds: the highest message id whose rows its fold reads
   * or writes, when those rows are all it touches; undefined when it may touch anything else (a
   * max(id), subscriptions, ...). A later MessageSent of a higher id may be folded before such an
   * event when every projection folding it says so (see foldEvents), since a send's folds touch only
   * the new message's rows and aggregates a lower message cannot change.
   */
  messagesTouched?(event: StoredEvent): number | undefined;
  /**
   * Groups of event types (each event bounded by messagesTouched) whose folds commute across
   * groups: this projection's fold of an event of one group neither reads nor writes anything that
   * any projection's fold of an event of another group writes. Between two sends the runner may then
   * gather the events of each group together, keeping the log order within a group, and fold a
   * group's events as one run when bulkTypes covers them (see sendsFirst and foldEvents).
   */
  readonly commutingGroups?: ReadonlyArray<ReadonlySet<string>>;
}
