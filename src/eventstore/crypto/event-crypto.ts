import type { Db } from '../../db/database.js';
import type { StoredEvent, StreamAppend } from '../types.js';
import { isEnvelope, open, seal, SHREDDED, type Envelope } from './envelope.js';
import type { DataKeyStore } from './key-store.js';
import { SEALING_RULES, type KeyScope } from './personal-fields.js';

/** Event types whose fold destroys keys: readers evict them from the key cache when they see one. */
export const KEY_DESTROYING_TYPES = new Set(['MessagesShredded', 'UserErased', 'BotStorageForgotten']);

/** The keys a MessagesShredded or UserErased event destroyed (never any content). */
export function keysDestroyedBy(event: Pick<StoredEvent, 'type' | 'data'>): string[] {
  if (!KEY_DESTROYING_TYPES.has(event.type)) return [];
  const ids = [event.data.key_ids, event.data.upload_key_ids].flatMap((list) => (Array.isArray(list) ? list : []));
  return ids.filter((id): id is string => typeof id === 'string');
}

/** A value a rule seals: strings, and for structured rules objects and arrays too (never an envelope again). */
const sealable = (value: unknown, structured: boolean | undefined) =>
  typeof value === 'string' || (structured === true && value !== null && typeof value === 'object' && !isEnvelope(value));

/**
 * Seals personal fields before an event is appended and opens them for every reader of the log.
 * The hash chain covers the sealed form (what is stored), so destroying a key never breaks it.
 */
export class EventCrypto {
  /** Opened views of events read recently (the same stored object is read by every projection). */
  private opened = new WeakMap<StoredEvent, StoredEvent>();

  constructor(readonly keys: DataKeyStore) {}

  /** Creates or loads every key the events of `appends` will be sealed under. */
  async prepare(appends: readonly StreamAppend[], db?: Db): Promise<void> {
    const scopes: KeyScope[] = [];
    for (const append of appends) {
      for (const event of append.events) {
        const scope = SEALING_RULES[event.type]?.keyOf(event.data);
        if (scope && SEALING_RULES[event.type]!.fields.some((field) => sealable(event.data[field], SEALING_RULES[event.type]!.structured))) scopes.push(scope);
      }
    }
    await this.keys.ensure(scopes, db);
  }

  /** The data as it will be stored: each personal string an envelope bound to `eventId`. */
  seal(type: string, data: Record<string, unknown>, eventId: string): Record<string, unknown> {
    const rule = SEALING_RULES[type];
    const scope = rule?.keyOf(data);
    if (!rule || !scope) return data;
    const key = this.keys.cached(scope.keyId);
    if (!key) throw new Error(`data key ${scope.keyId} is not available for sealing`);
    let sealed: Record<string, unknown> | undefined;
    for (const field of rule.fields) {
      const value = data[field];
      if (!sealable(value, rule.structured)) continue;
      sealed ??= { ...data };
      sealed[field] = seal(key, scope.keyId, eventId, field, value);
    }
    return sealed ?? data;
  }

  /** The events as readers see them: personal values decrypted, or SHREDDED where the key is gone. */
  async openEvents(events: readonly StoredEvent[], db?: Db): Promise<StoredEvent[]> {
    const needed: string[] = [];
    for (const event of events) {
      if (this.opened.has(event)) continue;
      const rule = SEALING_RULES[event.type];
      if (!rule) continue;
      for (const field of rule.fields) {
        const value = event.data[field];
        if (isEnvelope(value) && this.keys.cached(value.k) === undefined) needed.push(value.k);
      }
    }
    if (needed.length > 0) await this.keys.load(needed, db);
    const out = events.map((event) => this.openOne(event));
    for (const event of events) this.evict(keysDestroyedBy(event));
    return out;
  }

  private openOne(event: StoredEvent): StoredEvent {
    const memo = this.opened.get(event);
    if (memo) return memo;
    const rule = SEALING_RULES[event.type];
    if (!rule) return event;
    let data: Record<string, unknown> | undefined;
    for (const field of rule.fields) {
      const value = event.data[field];
      if (!isEnvelope(value)) continue;
      data ??= { ...event.data };
      data[field] = this.openValue(event.event_id, field, value);
    }
    const view = data ? { ...event, data } : event;
    this.opened.set(event, view);
    return view;
  }

  private openValue(eventId: string, field: string, envelope: Envelope): unknown {
    const key = this.keys.cached(envelope.k);
    if (!key) return SHREDDED;
    try {
      return open(key, eventId, field, envelope);
    } catch {
      // A value moved from another event or tampered with: the hash chain reports the row; readers go on.
      return SHREDDED;
    }
  }

  /** Forget keys another process destroyed, and every view opened with them. */
  evict(keyIds: readonly string[]): void {
    if (keyIds.length === 0) return;
    this.keys.forget(keyIds);
    this.opened = new WeakMap();
  }
}
