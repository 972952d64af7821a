import type { Db } from '../db/database.js';
import type { EventStore } from '../eventstore/event-store.js';
import type { StoredEvent } from '../eventstore/types.js';
import { CommandRuns } from './command-runs.js';
import { clientEventId, positionOf, slotOf } from './ids.js';
import { prepareEvent, translatedTypes } from './translators.js';
import type { ClientEvent, PreparedEvent, Recipient } from './types.js';

// Enough for every poll coming back within minutes at thousands of events per minute; older
// catch-ups read the log. Kept small so memory stays flat once it is full.
const PREPARED_CACHE = 2_000;
const SCAN_BATCH = 1_000;
/** Events prepared at once by the scan (each costs a few reads; the hub's own pool has as many connections). */
export const PREPARE_AHEAD = 8;
const SCAN_RETRY_MS = 500;

export interface Poll {
  recipient: Recipient;
  /** Deliver only events with an id above this. */
  afterId: number;
  resolve(events: ClientEvent[]): void;
}

/**
 * Fans the log out to this process's blocked GET /events calls. Each new log event is read and
 * prepared once; only the polls of users in its audience are looked at, so an event for one user
 * costs the same whatever the number of unrelated queues.
 */
export class EventQueueHub {
  private readonly pollsByUser = new Map<number, Set<Poll>>();
  /** Promises, so polls arriving together for one event share its preparation (one set of queries). */
  private readonly prepared = new Map<number, Promise<PreparedEvent | null>>();
  /**
   * Every client-visible event the hub scanned after `recentFrom`, in log order: a poll that
   * comes back for what happened while it was away is answered from here, without reading the log.
   */
  private recent: Array<{ position: number; prepared: PreparedEvent }> = [];
  private recentFrom = 0;
  private scanned = 0;
  private target = 0;
  private scanning: Promise<void> | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private stopped = false;
  private readonly runs: CommandRuns;

  constructor(
    private readonly db: Db,
    private readonly store: EventStore,
  ) {
    this.runs = new CommandRuns(store);
  }

  /** Position up to which blocked polls have been offered every event. */
  get scannedPosition(): number {
    return this.scanned;
  }

  start(initialPosition: number): void {
    this.scanned = Math.max(this.scanned, initialPosition);
    this.target = Math.max(this.target, initialPosition);
    this.forgetRecent();
  }

  /** The recent list stops being complete (events skipped unread): start it afresh from here. */
  private forgetRecent(): void {
    this.recent = [];
    this.recentFrom = this.scanned;
  }

  private remember(position: number, prepared: PreparedEvent): void {
    this.recent.push({ position, prepared });
    // Trimmed a quarter at a time, so the copy is not paid on every event.
    if (this.recent.length > PREPARED_CACHE * 1.25) {
      const dropped = this.recent.splice(0, this.recent.length - PREPARED_CACHE);
      this.recentFrom = dropped[dropped.length - 1]!.position;
    }
  }

  get blockedCount(): number {
    let n = 0;
    for (const set of this.pollsByUser.values()) n += set.size;
    return n;
  }

  /** The read tables reached `position`: offer the new events to blocked polls. */
  advance(position: number): void {
    if (this.stopped || position <= this.target) return;
    this.target = position;
    this.startScan();
  }

  private startScan(): void {
    if (this.stopped || this.scanning) return;
    // Nobody is blocked: nothing to offer. A poll that arrives later reads the log itself first.
    if (this.pollsByUser.size === 0) {
      this.scanned = this.target;
      this.forgetRecent();
      return;
    }
    // Nothing awaits this promise, so it must never reject: a scan fails when the database goes away
    // (a restart, a failover, the server shutting down). Blocked polls keep waiting and the scan is
    // retried from where it stopped until it gets through; the events are in the log either way.
    this.scanning = this.scan()
      .catch(() => {
        if (this.stopped || this.retryTimer) return;
        this.retryTimer = setTimeout(() => {
          this.retryTimer = undefined;
          this.startScan();
        }, SCAN_RETRY_MS);
        this.retryTimer.unref();
      })
      .finally(() => (this.scanning = undefined));
  }

  private async scan(): Promise<void> {
    while (this.scanned < this.target) {
      const target = this.target;
      const events = await this.store.readRange(this.scanned, target, translatedTypes(), SCAN_BATCH);
      // Preparations are independent reads: a few at a time keep the scan up with a busy log; the
      // events still reach the polls one by one in log order, and a failed one stops the scan there.
      for (let i = 0; i < events.length; i += PREPARE_AHEAD) {
        const slice = events.slice(i, i + PREPARE_AHEAD);
        const outcomes = await Promise.allSettled(slice.map((event) => this.prepare(event)));
        for (const [k, event] of slice.entries()) {
          const outcome = outcomes[k]!;
          if (outcome.status === 'rejected') throw outcome.reason;
          this.scanned = event.position;
          if (outcome.value) {
            this.remember(event.position, outcome.value);
            this.dispatch(event.position, outcome.value);
          }
        }
      }
      // A short page means nothing else up to the target can reach a client.
      if (events.length < SCAN_BATCH) this.scanned = Math.max(this.scanned, target);
    }
  }

  private dispatch(position: number, prepared: PreparedEvent): void {
    const candidates: Poll[] = [];
    if (prepared.audience === 'realm') {
      for (const set of this.pollsByUser.values()) candidates.push(...set);
    } else {
      for (const userId of prepared.audience) {
        const set = this.pollsByUser.get(userId);
        if (set) candidates.push(...set);
      }
    }
    for (const poll of candidates) {
      const events = clientEventsAt(position, prepared, poll.recipient, poll.afterId);
      if (events.length > 0) {
        this.remove(poll);
        poll.resolve(events);
      }
    }
  }

  prepare(event: StoredEvent): Promise<PreparedEvent | null> {
    const known = this.prepared.get(event.position);
    if (known) return known;
    const prepared = prepareEvent(event, this.db, this.runs);
    this.prepared.set(event.position, prepared);
    // A failure (the database went away) is not remembered: the next poll prepares it again.
    prepared.catch(() => {
      if (this.prepared.get(event.position) === prepared) this.prepared.delete(event.position);
    });
    if (this.prepared.size > PREPARED_CACHE) {
      const oldest = this.prepared.keys().next().value as number;
      this.prepared.delete(oldest);
    }
    return prepared;
  }

  /**
   * Client events for `recipient` after `afterId` that are already in the log, up to `limit` log
   * events, and the position the scan reached (so a caller can wait from there).
   */
  async pending(recipient: Recipient, afterId: number, upTo: number): Promise<{ events: ClientEvent[]; reached: number }> {
    let from = positionOf(afterId);
    const out: ClientEvent[] = [];
    // The position of afterId itself may still hold later slots.
    if (slotOf(afterId) < 499 && from > 0) from -= 1;
    if (from >= this.recentFrom && upTo <= this.scanned) return this.pendingInMemory(recipient, afterId, from, upTo);
    // Only event types some translator turns into client events are read: a log full of other
    // bookkeeping (queue registrations, key changes) costs a catching-up poll nothing.
    while (from < upTo && out.length === 0) {
      const events = await this.store.readRange(from, upTo, translatedTypes(), SCAN_BATCH);
      for (const event of events) {
        const prepared = await this.prepare(event);
        if (prepared) out.push(...clientEventsAt(event.position, prepared, recipient, afterId));
      }
      from = events.length < SCAN_BATCH ? upTo : events[events.length - 1]!.position;
    }
    return { events: out, reached: from };
  }

  /** `pending` from the recent list, which holds every client-visible event in (from, upTo]. */
  private pendingInMemory(recipient: Recipient, afterId: number, from: number, upTo: number): { events: ClientEvent[]; reached: number } {
    const reached = upTo;
    const out: ClientEvent[] = [];
    let lo = 0;
    let hi = this.recent.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.recent[mid]!.position <= from) lo = mid + 1;
      else hi = mid;
    }
    for (let i = lo; i < this.recent.length && this.recent[i]!.position <= reached; i++) {
      const { position, prepared } = this.recent[i]!;
      out.push(...clientEventsAt(position, prepared, recipient, afterId));
    }
    return { events: out, reached: Math.max(reached, from) };
  }

  add(poll: Poll): void {
    // Shutting down: a poll that arrives after releaseAll() is answered at once, not at its heartbeat.
    if (this.stopped) {
      poll.resolve([]);
      return;
    }
    const userId = poll.recipient.user.id;
    let set = this.pollsByUser.get(userId);
    if (!set) this.pollsByUser.set(userId, (set = new Set()));
    set.add(poll);
  }

  remove(poll: Poll): void {
    const set = this.pollsByUser.get(poll.recipient.user.id);
    if (!set) return;
    set.delete(poll);
    if (set.size === 0) this.pollsByUser.delete(poll.recipient.user.id);
  }

  /** Answers every blocked poll (graceful shutdown). */
  releaseAll(): void {
    this.stopped = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    for (const set of this.pollsByUser.values()) for (const poll of set) poll.resolve([]);
    this.pollsByUser.clear();
  }
}

function clientEventsAt(position: number, prepared: PreparedEvent, recipient: Recipient, afterId: number): ClientEvent[] {
  if (prepared.audience !== 'realm' && !prepared.audience.has(recipient.user.id)) return [];
  const wanted = recipient.queue.event_types;
  const out: ClientEvent[] = [];
  prepared.forUser(recipient).forEach((event, k) => {
    const id = clientEventId(position, k);
    if (id <= afterId) return;
    if (wanted && !wanted.includes(event.type)) return;
    out.push({ ...event, id });
  });
  return out;
}
