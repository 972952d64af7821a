import type { Db } from '../db/database.js';
import type { StoredEvent } from '../eventstore/types.js';
import type { PreparedEvent, Translator } from './types.js';

/**
 * Each area registers how its domain events become Zulip client events. Events no area
 * translates (queue bookkeeping, API key changes, ...) reach no client.
 */
const translators = new Map<string, Translator>();

export function registerTranslator(type: string, translator: Translator): void {
  translators.set(type, translator);
}

export async function prepareEvent(event: StoredEvent, db: Db): Promise<PreparedEvent | null> {
  const translator = translators.get(event.type);
  return translator ? translator(event, db) : null;
}
