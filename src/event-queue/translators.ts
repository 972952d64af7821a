import type { Db } from '../db/database.js';
import type { StoredEvent } from '../eventstore/types.js';
import type { PreparedEvent, Translator } from './types.js';

/**
 * Each area registers how its domain events become Zulip client events. Events no area
 * translates (queue bookkeeping, API key changes, ...) reach no client. Several areas may
 * translate the same domain event (a time zone change is a realm_user update for everyone and a
 * user_settings update for the user): their client events are joined, in registration order.
 */
const translators = new Map<string, Translator[]>();
let translated: string[] | undefined;

export function registerTranslator(type: string, translator: Translator): void {
  const list = translators.get(type) ?? [];
  list.push(translator);
  translators.set(type, list);
  translated = undefined;
}

/** The log event types that can reach a client; readers of the log for queues skip the others. */
export function translatedTypes(): readonly string[] {
  translated ??= [...translators.keys()];
  return translated;
}

const reaches = (prepared: PreparedEvent, userId: number) => prepared.audience === 'realm' || prepared.audience.has(userId);

function join(parts: PreparedEvent[]): PreparedEvent {
  const audience = parts.some((p) => p.audience === 'realm')
    ? ('realm' as const)
    : new Set(parts.flatMap((p) => [...(p.audience as ReadonlySet<number>)]));
  return {
    audience,
    forUser: (recipient) => parts.flatMap((p) => (reaches(p, recipient.user.id) ? p.forUser(recipient) : [])),
  };
}

export async function prepareEvent(event: StoredEvent, db: Db): Promise<PreparedEvent | null> {
  const list = translators.get(event.type);
  if (!list) return null;
  const parts: PreparedEvent[] = [];
  for (const translator of list) {
    const prepared = await translator(event, db);
    if (prepared) parts.push(prepared);
  }
  if (parts.length === 0) return null;
  return parts.length === 1 ? parts[0]! : join(parts);
}
