import type { Db } from '../../db/database.js';
import type { StoredEvent, StreamAppend } from '../types.js';
import { isBundleHead, isEnvelope, open, openBundle, sealBundle, SHREDDED, type Envelope, type ValueEnvelope } from './envelope.js';
import type { DataKeyStore, MintedKey } from './key-store.js';
import { inviteKeyId, legacyUploadKeyId, scheduledMessageKeyId, SEALING_RULES, type KeyScope, type SealingRule } from './personal-fields.js';
import { forEachAt, mapAt } from './field-paths.js';

/**
 * The keys that end with a thing rather than name themselves in the event: an invitation's once it
 * is accepted or revoked, a scheduled message's once delivered or deleted, an upload's with the file.
 */
const IMPLIED_KEYS: Readonly<Record<string, (data: Record<string, unknown>) => string | null>> = {
  InvitationAccepted: (d) => (typeof d.invite_id === 'number' ? inviteKeyId(d.invite_id) : null),
  InvitationRevoked: (d) => (typeof d.invite_id === 'number' ? inviteKeyId(d.invite_id) : null),
  ScheduledMessageDelivered: (d) => (typeof d.scheduled_message_id === 'number' ? scheduledMessageKeyId(d.scheduled_message_id) : null),
  ScheduledMessageDeleted: (d) => (typeof d.scheduled_message_id === 'number' ? scheduledMessageKeyId(d.scheduled_message_id) : null),
  // Sealed: the envelope names the key; stored before sealing: the old key id.
  AttachmentDeleted: (d) => (isEnvelope(d.path_id) ? d.path_id.k : typeof d.path_id === 'string' ? legacyUploadKeyId(d.path_id) : null),
};

/** Event types whose fold destroys keys: readers evict them from the key cache when they see one. */
export const KEY_DESTROYING_TYPES = new Set(['MessagesShredded', 'UserErased', 'BotStorageForgotten', ...Object.keys(IMPLIED_KEYS)]);

/** The keys a MessagesShredded or UserErased event (and the like) destroyed (never any content). */
export function keysDestroyedBy(event: Pick<StoredEvent, 'type' | 'data'>): string[] {
  if (!KEY_DESTROYING_TYPES.has(event.type)) return [];
  const implied = IMPLIED_KEYS[event.type]?.(event.data);
  if (implied) return [implied];
  const ids = [event.data.key_ids, event.data.upload_key_ids].flatMap((list) => (Array.isArray(list) ? list : []));
  return ids.filter((id): id is string => typeof id === 'string');
}

const topLevel = new WeakMap<SealingRule, boolean>();
/** The rule names only top-level fields (most do: a message's, a person's). */
function isTopLevel(rule: SealingRule): boolean {
  let answer = topLevel.get(rule);
  if (answer === undefined) topLevel.set(rule, (answer = rule.fields.every((field) => !field.includes('.'))));
  return answer;
}

/** A value a rule seals: strings, and for structured rules objects and arrays too (never an envelope again). */
const sealable = (value: unknown, structured: boolean | undefined) =>
  typeof value === 'string' || (structured === true && value !== null && typeof value === 'object' && !isEnvelope(value));

function someAt(data: unknown, path: string, test: (value: unknown) => boolean): boolean {
  let found = false;
  forEachAt(data, path, (value) => {
    found ||= test(value);
  });
  return found;
}

/**
 * Seals personal fields before an event is appended and opens them for every reader of the log.
 * The hash chain covers the sealed form (what is stored), so destroying a key never breaks it.
 */
export class EventCrypto {
  /** Opened views of events read recently (the same stored object is read by every projection). */
  private opened = new WeakMap<StoredEvent, StoredEvent>();
  /** keys.generation when `opened` was last emptied. */
  private openedGeneration: number;

  constructor(readonly keys: DataKeyStore) {
    this.openedGeneration = keys.generation;
  }

  /** The key scopes of `appends` with something to seal, each with whether its event starts its subject. */
  private scopesOf(appends: readonly StreamAppend[]): Array<{ scope: KeyScope; starts: boolean }> {
    const scopes: Array<{ scope: KeyScope; starts: boolean }> = [];
    for (const append of appends) {
      for (const event of append.events) {
        const rule = SEALING_RULES[event.type];
        const scope = rule?.keyOf(event.data);
        if (scope && rule!.fields.some((field) => someAt(event.data, field, (value) => sealable(value, rule!.structured)))) {
          scopes.push({ scope, starts: rule!.startsSubject === true });
        }
      }
    }
    return scopes;
  }

  /**
   * New keys, not yet stored, for the subjects `appends` start (SealingRule.startsSubject) and this
   * process has no key for: the event store writes their rows with the append.
   */
  mint(appends: readonly StreamAppend[]): Map<string, MintedKey> {
    const minted = new Map<string, MintedKey>();
    for (const { scope, starts } of this.scopesOf(appends)) {
      if (starts && !minted.has(scope.keyId) && this.keys.cached(scope.keyId) === undefined) minted.set(scope.keyId, this.keys.mint(scope));
    }
    return minted;
  }

  /** Creates or loads every key the events of `appends` will be sealed under, but those `minted`. */
  async prepare(appends: readonly StreamAppend[], db?: Db, minted?: ReadonlyMap<string, MintedKey>): Promise<void> {
    const scopes = this.scopesOf(appends).map(({ scope }) => scope).filter((scope) => !minted?.has(scope.keyId));
    await this.keys.ensure(scopes, db);
  }

  /** The data as it will be stored: each personal string an envelope bound to `eventId`. */
  seal(type: string, data: Record<string, unknown>, eventId: string, minted?: ReadonlyMap<string, MintedKey>): Record<string, unknown> {
    const rule = SEALING_RULES[type];
    const scope = rule?.keyOf(data);
    if (!rule || !scope) return data;
    const key = minted?.get(scope.keyId)?.key ?? this.keys.cached(scope.keyId);
    if (!key) throw new Error(`data key ${scope.keyId} is not available for sealing`);
    const entries: Array<[string, unknown]> = [];
    for (const field of rule.fields) {
      forEachAt(data, field, (value, path) => {
        if (sealable(value, rule.structured)) entries.push([path, value]);
      });
    }
    if (entries.length === 0) return data;
    const head = sealBundle(key, scope.keyId, eventId, entries);
    const headPath = entries[0]![0];
    const sealedPaths = new Set(entries.map(([path]) => path));
    const ref = { $enc: 2, k: scope.keyId, at: headPath } as const;
    if (isTopLevel(rule)) {
      // Every send comes here: one copy of the data, not one per sealed field.
      const sealed = { ...data };
      for (const path of sealedPaths) sealed[path] = path === headPath ? head : ref;
      return sealed;
    }
    let sealed = data;
    for (const field of rule.fields) {
      sealed = mapAt(sealed, field, (value, path) => (!sealedPaths.has(path) ? value : path === headPath ? head : ref));
    }
    return sealed;
  }

  /** The events as readers see them: personal values decrypted, or SHREDDED where the key is gone. */
  async openEvents(events: readonly StoredEvent[], db?: Db): Promise<StoredEvent[]> {
    this.dropViewsIfKeysForgotten();
    const needed: string[] = [];
    for (const event of events) {
      if (this.opened.has(event)) continue;
      const rule = SEALING_RULES[event.type];
      if (!rule) continue;
      for (const field of rule.fields) {
        forEachAt(event.data, field, (value) => {
          if (isEnvelope(value) && this.keys.cached(value.k) === undefined) needed.push(value.k);
        });
      }
    }
    if (needed.length > 0) await this.keys.load(needed, db);
    const out = events.map((event) => this.openOne(event));
    for (const event of events) this.evict(keysDestroyedBy(event));
    return out;
  }

  /**
   * `view` (the appender's own plaintext) is what opening `event` gives: the event store hands over
   * what it just sealed, so its own readers do not decrypt it again.
   */
  rememberOpened(event: StoredEvent, view: StoredEvent): void {
    this.dropViewsIfKeysForgotten();
    this.opened.set(event, view);
  }

  private dropViewsIfKeysForgotten(): void {
    if (this.openedGeneration === this.keys.generation) return;
    this.opened = new WeakMap();
    this.openedGeneration = this.keys.generation;
  }

  private openOne(event: StoredEvent): StoredEvent {
    this.dropViewsIfKeysForgotten();
    const memo = this.opened.get(event);
    if (memo) return memo;
    const rule = SEALING_RULES[event.type];
    if (!rule) return event;
    let bundled: Map<string, unknown> | undefined;
    const openAt = (value: Envelope, path: string): unknown => {
      if (value.$enc === 1) return this.openValue(event.event_id, path, value);
      bundled ??= this.openBundles(event, rule.fields);
      const opened = bundled.get(path);
      return opened === undefined ? SHREDDED : opened;
    };
    let data = event.data;
    if (isTopLevel(rule)) {
      // Every reader of the log comes here for every sealed event: one copy of the data, not one per field.
      let copy: Record<string, unknown> | undefined;
      for (const field of rule.fields) {
        const value = data[field];
        if (!isEnvelope(value)) continue;
        copy ??= { ...data };
        copy[field] = openAt(value, field);
      }
      data = copy ?? data;
    } else {
      for (const field of rule.fields) data = mapAt(data, field, (value, path) => (isEnvelope(value) ? openAt(value, path) : value));
    }
    const view = data !== event.data ? { ...event, data } : event;
    this.opened.set(event, view);
    return view;
  }

  /** Every value the bundle heads of `event` hold, by path (none from a head whose key is gone or that fails). */
  private openBundles(event: StoredEvent, fields: readonly string[]): Map<string, unknown> {
    const values = new Map<string, unknown>();
    for (const field of fields) {
      forEachAt(event.data, field, (value) => {
        if (!isEnvelope(value) || !isBundleHead(value)) return;
        const key = this.keys.cached(value.k);
        if (!key) return;
        try {
          for (const [path, opened] of openBundle(key, event.event_id, value)) values.set(path, opened);
        } catch {
          // Moved from another event or tampered with: the hash chain reports the row; readers go on.
        }
      });
    }
    return values;
  }

  private openValue(eventId: string, field: string, envelope: ValueEnvelope): unknown {
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
