import { legacyPresence, modernPresence, realmPresence, type LocalLastSeen, type PresenceRow, type PresenceTimes } from '../read/presence.js';
import type { RealmRow } from '../read/realm.js';

/** How long a ping may be answered with a copy of the realm's `presences` made for an earlier ping. */
export const PRESENCE_BODY_MS = 1_000;

interface Body {
  rows: readonly PresenceRow[];
  builtAt: number;
  /** The `presences` object as JSON text. */
  text: string;
  /** Each user's entry in `text`: where it starts and ends, and the entry itself. */
  spans: Map<number, { start: number; end: number; entry: string }>;
  rowOf: Map<number, PresenceRow>;
}

const entryText = (p: PresenceTimes, slim: boolean) =>
  `${JSON.stringify(slim ? String(p.user_id) : p.email)}:${JSON.stringify(slim ? modernPresence(p) : legacyPresence(p))}`;

/**
 * The `presences` of a ping as JSON text, shared by the pings of one second: with 10,000 users the
 * dictionary is about 0.7 MB (slim) to 1.9 MB (legacy), and building and writing it for every ping
 * that asks for it cost more than everything else the ping does. The pinging user's own entry is
 * always current (spliced in when it moved since the copy was made); others' entries are at most
 * PRESENCE_BODY_MS older than the ping, as if it had come that much earlier.
 */
export class PresenceBodies {
  private readonly bodies = new Map<string, Body>();

  constructor(private readonly maxAgeMs = PRESENCE_BODY_MS, private readonly clock: () => number = Date.now) {}

  text(realm: RealmRow, slim: boolean, rows: readonly PresenceRow[], userId: number, nowSecs: number, local?: LocalLastSeen): string {
    const key = `${realm.id}:${slim}`;
    let body = this.bodies.get(key);
    if (!body || body.rows !== rows || this.clock() - body.builtAt >= this.maxAgeMs) {
      body = this.build(realm, slim, rows, nowSecs, local);
      this.bodies.set(key, body);
      return body.text;
    }
    const span = body.spans.get(userId);
    const row = body.rowOf.get(userId);
    const own = row ? realmPresence([row], realm, nowSecs, local)[0] : undefined;
    if (!own && !span) return body.text;
    if (!own || !span) {
      // The user came into or went out of the dictionary: not a splice.
      body = this.build(realm, slim, rows, nowSecs, local);
      this.bodies.set(key, body);
      return body.text;
    }
    const entry = entryText(own, slim);
    return entry === span.entry ? body.text : body.text.slice(0, span.start) + entry + body.text.slice(span.end);
  }

  private build(realm: RealmRow, slim: boolean, rows: readonly PresenceRow[], nowSecs: number, local?: LocalLastSeen): Body {
    const rowOf = new Map<number, PresenceRow>();
    for (const row of rows) rowOf.set((row as unknown as { id: number }).id, row);
    const spans = new Map<number, { start: number; end: number; entry: string }>();
    const parts: string[] = [];
    let at = 1;
    for (const p of realmPresence(rows, realm, nowSecs, local)) {
      const entry = entryText(p, slim);
      if (parts.length > 0) at += 1;
      spans.set(p.user_id, { start: at, end: at + entry.length, entry });
      parts.push(entry);
      at += entry.length;
    }
    return { rows, builtAt: this.clock(), text: `{${parts.join(',')}}`, spans, rowOf };
  }
}
