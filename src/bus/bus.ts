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
  /**
   * Publish committed events downstream (JetStream); resolves once they are stored there.
   * `continuing`: the first event follows this bus's own last publish (ownLastPublished), and is
   * refused downstream, with the rest, if anything else was stored since.
   */
  publishEvents(events: readonly StoredEvent[], options?: { continuing?: boolean }): Promise<void>;
  /** Highest log position already stored downstream, if the bus can tell. */
  lastPublishedPosition(): Promise<number | undefined>;
  /**
   * The position of the last event this bus itself stored downstream, if it knows one: a guess
   * only (another process may have published since), which a `continuing` publish checks.
   */
  ownLastPublished?(): number | undefined;
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
