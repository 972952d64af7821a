import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import type { EventStore } from '../eventstore/event-store.js';
import { StreamVersionConflict, type EventMetadata, type StoredEvent, type StreamAppend } from '../eventstore/types.js';
import { errors } from '../domain/errors.js';

export interface ProjectionWaiter {
  waitFor(position: number, timeoutMs?: number): Promise<boolean>;
}

export interface Decision<R> {
  appends: StreamAppend[];
  result: R;
}

export interface RunOptions {
  /**
   * When the caller gets its answer: 'projected' (the default) once the read tables include the
   * events, so any later request on any node sees them (read-your-writes); 'committed' as soon as
   * the log holds them. 'committed' is only for commands none of whose readers depend on the fold
   * having happened: what they change is either written beside the log before the append and read
   * from there (presence's last-seen table), or every reader first waits for the fold of its
   * stream's last event (bot storage, see services/bot-storage.ts). The fold itself still follows
   * at once; only the answer stops waiting for it.
   */
  answerAt?: 'projected' | 'committed';
}

const MAX_ATTEMPTS = 25;

/**
 * Runs a command: `decide` loads the state it needs and returns the events to append; a stream
 * version conflict re-runs it on fresh state. The caller gets its answer only once the read tables
 * include the new events (read-your-writes), so any later request sees the change, unless the
 * command says its readers do not need that (RunOptions.answerAt).
 */
export class CommandRunner {
  /** The highest log position of a command this process answered before its fold (answerAt 'committed'). */
  private answeredUnfolded = 0;

  constructor(
    private readonly db: Db,
    private readonly store: EventStore,
    private readonly projections: ProjectionWaiter,
  ) {}

  async run<R>(metadata: EventMetadata, decide: () => Promise<Decision<R>>, options: RunOptions = {}): Promise<{ result: R; events: StoredEvent[] }> {
    for (let attempt = 1; ; attempt++) {
      try {
        // decide may itself report a conflict (it saw the log ahead of the read tables).
        const decision = await decide();
        if (decision.appends.every((a) => a.events.length === 0)) return { result: decision.result, events: [] };
        const events = await this.store.append(decision.appends, metadata);
        const position = events[events.length - 1]!.position;
        if (options.answerAt === 'committed') this.answeredUnfolded = Math.max(this.answeredUnfolded, position);
        else await this.projections.waitFor(position);
        return { result: decision.result, events };
      } catch (error) {
        if (!(error instanceof StreamVersionConflict)) throw error;
        if (attempt >= MAX_ATTEMPTS) throw errors.conflict();
        // The loser waits for the read tables to include the winner's events, then decides again.
        const head = await this.store.head();
        await this.projections.waitFor(head.position, 2_000);
        // A little jitter keeps a crowd of losers from colliding again in the same batch.
        await new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(attempt, 10) * 2));
      }
    }
  }

  /**
   * Once the read tables reach this, every command this process has answered is folded (event
   * queues deliver what is folded: a poll after an answer waits for this to find its events).
   */
  get answeredPosition(): number {
    return this.answeredUnfolded;
  }

  async nextId(sequence: string): Promise<number> {
    const { rows } = await sql<{ id: number }>`SELECT nextval(${sequence})::int8 AS id`.execute(this.db);
    return Number(rows[0]!.id);
  }
}
