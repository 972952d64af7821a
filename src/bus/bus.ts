import type { StoredEvent } from '../eventstore/types.js';

/**
 * Notification and fan-out between processes. Never the source of truth: a lost message only
 * delays a wake-up, since every reader catches up from the log.
 */
export interface Bus {
  readonly kind: 'in-process' | 'nats';
  /** Tell every process (this one included) that the log or the read tables advanced. */
  publishWake(signal: WakeSignal): void;
  onWake(listener: (signal: WakeSignal) => void): void;
  /** Publish committed events downstream (JetStream); resolves once they are stored there. */
  publishEvents(events: readonly StoredEvent[]): Promise<void>;
  /** Highest log position already stored downstream, if the bus can tell. */
  lastPublishedPosition(): Promise<number | undefined>;
  isConnected(): boolean;
  close(): Promise<void>;
}

export interface WakeSignal {
  /** 'appended': the log grew; 'projected': the read tables reached `position`. */
  kind: 'appended' | 'projected';
  position: number;
  /** Set when another process sent it. */
  remote?: boolean;
}
