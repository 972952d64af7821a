import { connect, headers, JSONCodec, type NatsConnection, type JetStreamClient, type JetStreamManager } from 'nats';
import { randomUUID } from 'node:crypto';
import type { StoredEvent } from '../eventstore/types.js';
import type { Bus, WakeSignal } from './bus.js';

export const DEFAULT_EVENTS_STREAM = 'CHAT_EVENTS';
export const POSITION_HEADER = 'Chat-Position';
export const LOG_HEADER = 'Chat-Log';
const DESCRIPTION_PREFIX = 'zulip-es log ';
/** How long close() lets a connection flush before closing it anyway. */
const DRAIN_LIMIT_MS = 2_000;

/** Which log a bus carries, and how to tell whether a stream made before logs had ids holds this one. */
export interface LogScope {
  logId: string;
  /** Whether an event id is in this log (for a stream with no log id: adopted only if its last event is ours). */
  hasEvent(eventId: string): Promise<boolean>;
}

const codec = JSONCodec<unknown>();

/**
 * Production bus. Committed events go to a JetStream stream with Nats-Msg-Id = event_id, so a
 * re-publish after a crash is dropped by the server. Wake-ups are plain core-NATS messages.
 * The connection is made in the background: NATS being down never blocks a write.
 *
 * One stream holds one log: the stream's description names the log id, and a stream that names
 * another log is refused (nothing is published to it, and `refusal` says why) rather than mixed.
 * Wake-ups travel on a subject of this log's own, so another deployment on the same NATS server
 * can never wake this one's workers or move its read-your-writes position.
 */
export class NatsBus implements Bus {
  readonly kind = 'nats' as const;
  private nc: NatsConnection | undefined;
  private js: JetStreamClient | undefined;
  private jsm: JetStreamManager | undefined;
  private readonly wakeListeners: Array<(signal: WakeSignal) => void> = [];
  private closed = false;
  private readonly ready: Promise<void>;
  /** Marks this bus's wake-ups (a pid is not unique across hosts). */
  private readonly origin = randomUUID();
  /** When the stream was created, as last read: a stream made anew restarts its sequence numbers. */
  private streamCreated: string | undefined;
  /** The stream sequence, log position and event id of the last event this process stored. */
  private lastStored: { created: string; seq: number; position: number; eventId: string } | undefined;

  /** JetStream stream holding the log; subjects are `<stream>.events.<type>`, wake-ups `<stream>.wake`. */
  readonly stream: string;
  private readonly subjectPrefix: string;
  private readonly wakeSubject: string;

  /** Why the stream was refused (it holds another log), once the bus has looked. */
  refusal: string | undefined;

  constructor(
    private readonly url: string,
    stream: string,
    private readonly scope: LogScope,
  ) {
    this.stream = stream;
    this.subjectPrefix = `${stream.toLowerCase()}.events`;
    this.wakeSubject = `${stream.toLowerCase()}.wake.${scope.logId}`;
    this.ready = this.connectLoop();
  }

  get eventsSubjectPrefix(): string {
    return this.subjectPrefix;
  }

  private async connectLoop(): Promise<void> {
    while (!this.closed) {
      let nc: NatsConnection | undefined;
      try {
        nc = await connect({
          servers: this.url,
          reconnect: true,
          maxReconnectAttempts: -1,
          reconnectTimeWait: 500,
          timeout: 2_000,
          // This connection's own wake-ups are not sent back to it (its listeners had them already).
          noEcho: true,
          // No stack trace captured per request (one per event published): a failed publish is
          // retried by the relay, which does not need to know where the request was made.
          noAsyncTraces: true,
        });
        // close() came while connecting (a short CLI command): this connection must not keep the process alive.
        if (this.closed) {
          await nc.close().catch(() => undefined);
          return;
        }
        this.nc = nc;
        this.jsm = await nc.jetstreamManager();
        await this.ensureStream(this.jsm);
        this.js = nc.jetstream();
        nc.subscribe(this.wakeSubject, {
          callback: (error, msg) => {
            if (error) return;
            const { kind, position, origin } = codec.decode(msg.data) as WakeSignal & { origin?: string };
            // This bus's own wake-ups reached its listeners when they were published.
            if (origin === this.origin) return;
            const signal: WakeSignal = { kind, position, remote: true };
            for (const listener of this.wakeListeners) listener(signal);
          },
        });
        return;
      } catch (error) {
        // The next attempt opens a connection of its own: this one must not stay open beside it.
        this.nc = undefined;
        this.jsm = undefined;
        if (nc) await nc.close().catch(() => undefined);
        if (error instanceof StreamRefused) return;
        await new Promise((resolve) => setTimeout(resolve, 1_000));
      }
    }
  }

  private async ensureStream(jsm: JetStreamManager): Promise<void> {
    const description = `${DESCRIPTION_PREFIX}${this.scope.logId}`;
    let info;
    try {
      info = await jsm.streams.info(this.stream);
    } catch {
      await jsm.streams.add({ name: this.stream, subjects: [`${this.subjectPrefix}.>`], duplicate_window: 120_000_000_000, description });
      return;
    }
    const named = info.config.description?.startsWith(DESCRIPTION_PREFIX) ? info.config.description.slice(DESCRIPTION_PREFIX.length) : undefined;
    if (named === this.scope.logId) return;
    if (named === undefined && (await this.holdsOnlyThisLog(jsm, info.state.messages, info.state.last_seq))) {
      // A stream made before logs had ids, by this log: it becomes this log's.
      await jsm.streams.update(this.stream, { ...info.config, description });
      return;
    }
    this.refusal =
      `NATS stream ${this.stream} holds ${named ? `another log (${named})` : 'events of another log'}, not this database's log ${this.scope.logId}: ` +
      'give each deployment a stream of its own (NATS_STREAM)';
    throw new StreamRefused(this.refusal);
  }

  private async holdsOnlyThisLog(jsm: JetStreamManager, messages: number, lastSeq: number): Promise<boolean> {
    if (messages === 0) return true;
    const last = await jsm.streams.getMessage(this.stream, { seq: lastSeq });
    const eventId = last.header.get('Nats-Msg-Id');
    return eventId !== '' && (await this.scope.hasEvent(eventId));
  }

  /** Resolves once connected, or after `ms` whichever comes first. */
  async waitConnected(ms: number): Promise<boolean> {
    await Promise.race([this.ready, new Promise((resolve) => setTimeout(resolve, ms))]);
    return this.isConnected();
  }

  publishWake(signal: WakeSignal): void {
    // Local listeners first: a process must not depend on NATS to wake itself.
    for (const listener of this.wakeListeners) listener(signal);
    if (!this.nc || this.nc.isClosed()) return;
    try {
      this.nc.publish(this.wakeSubject, codec.encode({ kind: signal.kind, position: signal.position, origin: this.origin }));
    } catch {
      // Disconnected: readers catch up from the log on their next wake.
    }
  }

  onWake(listener: (signal: WakeSignal) => void): void {
    this.wakeListeners.push(listener);
  }

  async publishEvents(events: readonly StoredEvent[], options: { continuing?: boolean } = {}): Promise<void> {
    if (this.refusal) throw new Error(this.refusal);
    const js = this.js;
    if (!js) throw new Error('NATS is not connected');
    const after = options.continuing ? this.lastStored?.eventId : undefined;
    if (options.continuing && after === undefined) throw new Error('no publish of this process to continue from');
    // Whatever happens next, the stream's last message is known again only from a full success.
    const stored = this.lastStored;
    this.lastStored = undefined;
    // Sent back to back rather than one round trip each. Each after the first names its predecessor
    // (expected last message id), and the first names this bus's own last publish when continuing:
    // should one be lost, or anything else reach the stream in between, JetStream refuses those
    // after it instead of storing a gap, and the relay starts again from the last one stored.
    const acks = events.map((event, i) => {
      const h = headers();
      h.set(POSITION_HEADER, String(event.position));
      h.set(LOG_HEADER, this.scope.logId);
      const lastMsgID = i > 0 ? events[i - 1]!.event_id : after;
      return js.publish(`${this.subjectPrefix}.${event.type}`, codec.encode(event), {
        msgID: event.event_id, headers: h, timeout: 5_000, ...(lastMsgID !== undefined ? { expect: { lastMsgID } } : {}),
      });
    });
    const results = await Promise.allSettled(acks);
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
    const last = results.at(-1);
    const created = this.streamCreated ?? stored?.created;
    if (last?.status === 'fulfilled' && created) this.lastStored = { created, seq: last.value.seq, position: events.at(-1)!.position, eventId: events.at(-1)!.event_id };
    else this.lastStored = stored;
  }

  ownLastPublished(): number | undefined {
    return this.lastStored?.position;
  }

  async lastPublishedPosition(): Promise<number | undefined> {
    if (this.refusal) throw new Error(this.refusal);
    const jsm = this.jsm;
    if (!jsm) throw new Error('NATS is not connected');
    const info = await jsm.streams.info(this.stream);
    this.streamCreated = info.created;
    if (info.state.messages === 0) return 0;
    // Still the last one this process stored: its position is known without reading it back.
    if (this.lastStored?.created === info.created && this.lastStored.seq === info.state.last_seq) return this.lastStored.position;
    const msg = await jsm.streams.getMessage(this.stream, { seq: info.state.last_seq });
    return Number(msg.header.get(POSITION_HEADER) || 0);
  }

  isConnected(): boolean {
    return !!this.nc && !this.nc.isClosed() && !!this.js && this.refusal === undefined;
  }

  async close(): Promise<void> {
    this.closed = true;
    const nc = this.nc;
    if (!nc) return;
    // A connection that cannot drain (reconnecting, or its server stopped answering) is closed
    // outright: it must not keep the process alive.
    let timer: NodeJS.Timeout | undefined;
    const gaveUp = new Promise<void>((resolve) => { timer = setTimeout(resolve, DRAIN_LIMIT_MS); });
    await Promise.race([nc.drain().catch(() => undefined), gaveUp]);
    clearTimeout(timer);
    if (!nc.isClosed()) await nc.close().catch(() => undefined);
  }
}

class StreamRefused extends Error {}
