import { connect, headers, JSONCodec, type NatsConnection, type JetStreamClient, type JetStreamManager } from 'nats';
import type { StoredEvent } from '../eventstore/types.js';
import type { Bus, WakeSignal } from './bus.js';

export const DEFAULT_EVENTS_STREAM = 'CHAT_EVENTS';
export const POSITION_HEADER = 'Chat-Position';

const codec = JSONCodec<unknown>();

/**
 * Production bus. Committed events go to a JetStream stream with Nats-Msg-Id = event_id, so a
 * re-publish after a crash is dropped by the server. Wake-ups are plain core-NATS messages.
 * The connection is made in the background: NATS being down never blocks a write.
 */
export class NatsBus implements Bus {
  readonly kind = 'nats' as const;
  private nc: NatsConnection | undefined;
  private js: JetStreamClient | undefined;
  private jsm: JetStreamManager | undefined;
  private readonly wakeListeners: Array<(signal: WakeSignal) => void> = [];
  private closed = false;
  private readonly ready: Promise<void>;

  /** JetStream stream holding the log; subjects are `<stream>.events.<type>`, wake-ups `<stream>.wake`. */
  readonly stream: string;
  private readonly subjectPrefix: string;
  private readonly wakeSubject: string;

  constructor(
    private readonly url: string,
    stream = DEFAULT_EVENTS_STREAM,
  ) {
    this.stream = stream;
    this.subjectPrefix = `${stream.toLowerCase()}.events`;
    this.wakeSubject = `${stream.toLowerCase()}.wake`;
    this.ready = this.connectLoop();
  }

  get eventsSubjectPrefix(): string {
    return this.subjectPrefix;
  }

  private async connectLoop(): Promise<void> {
    while (!this.closed) {
      try {
        const nc = await connect({
          servers: this.url,
          reconnect: true,
          maxReconnectAttempts: -1,
          reconnectTimeWait: 500,
          timeout: 2_000,
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
            const signal = codec.decode(msg.data) as WakeSignal;
            for (const listener of this.wakeListeners) listener(signal);
          },
        });
        return;
      } catch {
        await new Promise((resolve) => setTimeout(resolve, 1_000));
      }
    }
  }

  private async ensureStream(jsm: JetStreamManager): Promise<void> {
    try {
      await jsm.streams.info(this.stream);
    } catch {
      await jsm.streams.add({ name: this.stream, subjects: [`${this.subjectPrefix}.>`], duplicate_window: 120_000_000_000 });
    }
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
      this.nc.publish(this.wakeSubject, codec.encode({ ...signal, origin: process.pid }));
    } catch {
      // Disconnected: readers catch up from the log on their next wake.
    }
  }

  onWake(listener: (signal: WakeSignal) => void): void {
    this.wakeListeners.push(listener);
  }

  async publishEvents(events: readonly StoredEvent[]): Promise<void> {
    const js = this.js;
    if (!js) throw new Error('NATS is not connected');
    for (const event of events) {
      const h = headers();
      h.set(POSITION_HEADER, String(event.position));
      await js.publish(`${this.subjectPrefix}.${event.type}`, codec.encode(event), { msgID: event.event_id, headers: h, timeout: 5_000 });
    }
  }

  async lastPublishedPosition(): Promise<number | undefined> {
    const jsm = this.jsm;
    if (!jsm) throw new Error('NATS is not connected');
    const info = await jsm.streams.info(this.stream);
    if (info.state.messages === 0) return 0;
    const msg = await jsm.streams.getMessage(this.stream, { seq: info.state.last_seq });
    return Number(msg.header.get(POSITION_HEADER) || 0);
  }

  isConnected(): boolean {
    return !!this.nc && !this.nc.isClosed() && !!this.js;
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.nc?.drain().catch(() => undefined);
  }
}
