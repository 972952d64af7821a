import { EventEmitter } from 'node:events';
import type { StoredEvent } from '../eventstore/types.js';
import type { Bus, WakeSignal } from './bus.js';

/** The embedded default: one process, so wake-ups are plain function calls. */
export class InProcessBus implements Bus {
  readonly kind = 'in-process' as const;
  private readonly emitter = new EventEmitter().setMaxListeners(0);
  private published = 0;

  publishWake(signal: WakeSignal): void {
    this.emitter.emit('wake', signal);
  }

  onWake(listener: (signal: WakeSignal) => void): void {
    this.emitter.on('wake', listener);
  }

  async publishEvents(events: readonly StoredEvent[]): Promise<void> {
    for (const event of events) {
      this.published = Math.max(this.published, event.position);
      this.emitter.emit('event', event);
    }
  }

  onEvent(listener: (event: StoredEvent) => void): void {
    this.emitter.on('event', listener);
  }

  async lastPublishedPosition(): Promise<number | undefined> {
    return undefined;
  }

  isConnected(): boolean {
    return true;
  }

  async close(): Promise<void> {
    this.emitter.removeAllListeners();
  }
}
