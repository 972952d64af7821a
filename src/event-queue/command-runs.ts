import type { EventStore } from '../eventstore/event-store.js';
import type { EventMetadata, StoredEvent } from '../eventstore/types.js';
import type { RunReader } from './types.js';

/** Events read per look-up while following a run backwards or forwards. */
const PAGE = 256;
/** Runs kept with their translations: the positions of one run are prepared close together. */
const KEPT_RUNS = 64;

/**
 * The real server sends one client event for what one request did to many rows (all of a user's
 * new subscriptions in one `subscription add`, ...), where our log holds one event per row. A
 * command's events take consecutive positions and commit together, so the rows of one request are
 * a *run*: consecutive positions holding events of one type with the same request metadata. Any
 * reader that sees one event of a run can read the whole run, live or catching up, so grouping by
 * run gives every queue the same client events whenever it reads them.
 */
export function sameCommand(a: EventMetadata, b: EventMetadata): boolean {
  return a.request_id === b.request_id && a.time === b.time && a.actor_id === b.actor_id && a.realm_id === b.realm_id && a.client === b.client;
}

interface KnownRun {
  first: number;
  last: number;
  events: readonly StoredEvent[];
  memo: Map<string, Promise<unknown>>;
}

export class CommandRuns implements RunReader {
  private readonly runs: KnownRun[] = [];
  private lookups: Promise<unknown> = Promise.resolve();

  constructor(private readonly store: EventStore) {}

  async runOf(event: StoredEvent): Promise<readonly StoredEvent[]> {
    return (await this.known(event)).events;
  }

  memo<T>(run: readonly StoredEvent[], key: string, translate: () => Promise<T>): Promise<T> {
    const known = this.find(run[0]!.position) ?? this.remember(run);
    let value = known.memo.get(key) as Promise<T> | undefined;
    if (!value) {
      value = translate();
      known.memo.set(key, value);
      // A failure (the database went away) is not kept: the next position asks again.
      value.catch(() => {
        if (known.memo.get(key) === value) known.memo.delete(key);
      });
    }
    return value;
  }

  private find(position: number): KnownRun | undefined {
    return this.runs.find((run) => run.first <= position && position <= run.last);
  }

  private remember(events: readonly StoredEvent[]): KnownRun {
    const run: KnownRun = { first: events[0]!.position, last: events[events.length - 1]!.position, events, memo: new Map() };
    this.runs.push(run);
    if (this.runs.length > KEPT_RUNS) this.runs.shift();
    return run;
  }

  private known(event: StoredEvent): Promise<KnownRun> {
    const found = this.find(event.position);
    if (found) return Promise.resolve(found);
    // One look-up at a time: the hub prepares several positions of a run at once, and all but the
    // first then find the run the first one read.
    const next = this.lookups.then(() => this.find(event.position) ?? this.read(event));
    this.lookups = next.catch(() => undefined);
    return next;
  }

  private async read(event: StoredEvent): Promise<KnownRun> {
    const same = (e: StoredEvent) => e.type === event.type && sameCommand(e.metadata, event.metadata);
    const before = await this.walkBack(event, same);
    const after = await this.walkForward(event, same);
    return this.remember([...before, event, ...after]);
  }

  private async walkBack(event: StoredEvent, same: (e: StoredEvent) => boolean): Promise<StoredEvent[]> {
    const out: StoredEvent[] = [];
    let next = event.position - 1;
    while (next > 0) {
      const from = Math.max(0, next - PAGE);
      const page = await this.store.readRange(from, next, [event.type], PAGE);
      let k = page.length - 1;
      while (k >= 0 && page[k]!.position === next && same(page[k]!)) {
        out.push(page[k]!);
        next -= 1;
        k -= 1;
      }
      // Stopped inside the page: the run starts here.
      if (next > from) break;
    }
    return out.reverse();
  }

  private async walkForward(event: StoredEvent, same: (e: StoredEvent) => boolean): Promise<StoredEvent[]> {
    const out: StoredEvent[] = [];
    let next = event.position + 1;
    // The first look is one position wide: most runs end where they start, often at the head.
    let width = 1;
    for (;;) {
      const page = await this.store.readRange(next - 1, next - 1 + width, [event.type], width);
      let k = 0;
      while (k < page.length && page[k]!.position === next && same(page[k]!)) {
        out.push(page[k]!);
        next += 1;
        k += 1;
      }
      if (k < width) break;
      width = PAGE;
    }
    return out;
  }
}
