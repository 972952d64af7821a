import type { Db } from '../db/database.js';
import { realmPresenceRows, type PresenceRow } from '../read/presence.js';

/** How old a shared copy of a realm's presence rows may be when nothing this process folded changed them. */
export const PRESENCE_SNAPSHOT_MS = 1_000;

/** Read tables the rows come from besides presence_last_seen (which no projection moves). */
const TABLES = ['users', 'user_presence', 'realms'];

interface Snapshot {
  version: number;
  takenAt: number;
  rows: Promise<readonly PresenceRow[]>;
}

/**
 * One copy of a realm's presence rows shared by every ping that asks for presences (with 10,000
 * users that is a large join read per ping). The copy is dropped as soon as a logged presence or a
 * user changes here, so what the log says is shown at once; the last-seen times other processes
 * write show up within PRESENCE_SNAPSHOT_MS (this process's own come from its tracker, at once).
 */
export class PresenceSnapshots {
  private readonly byRealm = new Map<number, Snapshot>();

  constructor(
    private readonly db: Db,
    private readonly tablesVersion: (tables: readonly string[]) => number,
    private readonly maxAgeMs = PRESENCE_SNAPSHOT_MS,
    private readonly clock: () => number = Date.now,
  ) {}

  /** Drops every copy (tests that move rows behind the process's back). */
  clear(): void {
    this.byRealm.clear();
  }

  rows(realmId: number): Promise<readonly PresenceRow[]> {
    const version = this.tablesVersion(TABLES);
    const now = this.clock();
    const held = this.byRealm.get(realmId);
    if (held && held.version === version && now - held.takenAt < this.maxAgeMs) return held.rows;
    const rows = realmPresenceRows(this.db, realmId);
    const snapshot = { version, takenAt: now, rows };
    this.byRealm.set(realmId, snapshot);
    // A failed read is not shared with the next caller.
    rows.catch(() => this.byRealm.get(realmId) === snapshot && this.byRealm.delete(realmId));
    return rows;
  }
}
