import type { StoredEvent } from './types.js';

/**
 * The events this process committed last, as long as they form an unbroken run of positions.
 * Readers that follow the log closely (the projection runner, the NATS relay, the event-queue hub)
 * take the events they would read back from here instead. An event another process appended breaks
 * the run and empties the list, so the list never answers for a stretch of the log it has not seen
 * whole.
 */
export class RecentCommits {
  private events: StoredEvent[] = [];
  /** Index of the first live entry: trimming moves it instead of copying the array each time. */
  private start = 0;

  // Followers read within milliseconds of a commit; a poll catching up from further back reads the log.
  constructor(private readonly capacity = 1_024) {}

  /** `batch`: one committed batch, in position order. */
  add(batch: readonly StoredEvent[]): void {
    if (batch.length === 0) return;
    const last = this.events[this.events.length - 1];
    if (last && batch[0]!.position !== last.position + 1) this.clear();
    for (const event of batch) this.events.push(event);
    if (this.events.length - this.start > this.capacity) this.start = this.events.length - this.capacity;
    // Compact once the dead prefix outgrows the live part.
    if (this.start > this.capacity) {
      this.events = this.events.slice(this.start);
      this.start = 0;
    }
  }

  clear(): void {
    this.events = [];
    this.start = 0;
  }

  /**
   * Up to `limit` events after `after`, when this list holds position `after + 1`; undefined when
   * it cannot say (the caller reads the log). What lies beyond the list's last event is unknown.
   */
  after(after: number, limit: number): StoredEvent[] | undefined {
    const first = this.events[this.start];
    if (!first || first.position > after + 1) return undefined;
    const index = this.start + (after + 1 - first.position);
    if (index >= this.events.length) return undefined;
    return this.events.slice(index, index + limit);
  }

  /** Every event with `after < position <= upTo`, when the list holds all of them; else undefined. */
  range(after: number, upTo: number): StoredEvent[] | undefined {
    if (upTo <= after) return [];
    const last = this.events[this.events.length - 1];
    if (!last || last.position < upTo) return undefined;
    return this.after(after, upTo - after);
  }
}
