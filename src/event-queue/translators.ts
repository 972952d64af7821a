import type { Db } from '../db/database.js';
import type { StoredEvent } from '../eventstore/types.js';
import { HEARTBEAT_BASE } from './ids.js';
import type { PreparedEvent, RunReader, RunTranslator, Translator } from './types.js';

/**
 * Each area registers how its domain events become Zulip client events. Events no area
 * translates (queue bookkeeping, API key changes, ...) reach no client. Several areas may
 * translate the same domain event (a time zone change is a realm_user update for everyone and a
 * user_settings update for the user): their client events are joined, in registration order.
 */
const translators = new Map<string, Translator[]>();
const runTranslators = new Map<string, RunTranslator>();
let translated: string[] | undefined;

export function registerTranslator(type: string, translator: Translator): void {
  const list = translators.get(type) ?? [];
  list.push(translator);
  translators.set(type, list);
  translated = undefined;
}

/**
 * Events of `type` are translated a run at a time (see command-runs.ts): the client events of the
 * whole run go out at its last position, as one request's events do on the real server.
 */
export function registerRunTranslator(type: string, translator: RunTranslator): void {
  if (runTranslators.has(type) || translators.has(type)) throw new Error(`${type} already has a translator`);
  runTranslators.set(type, translator);
  translated = undefined;
}

/** The log event types that can reach a client; readers of the log for queues skip the others. */
export function translatedTypes(): readonly string[] {
  translated ??= [...translators.keys(), ...runTranslators.keys()];
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

export async function prepareEvent(event: StoredEvent, db: Db, runs: RunReader): Promise<PreparedEvent | null> {
  const runTranslator = runTranslators.get(event.type);
  if (runTranslator) return prepareInRun(event, db, runs, runTranslator);
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

/**
 * A position's share of its run's client events. Each position holds at most HEARTBEAT_BASE
 * client events per queue (ids.ts), so a run whose events for one queue could outgrow one position
 * spreads them, in order, over its last few positions; usually all go out at the last.
 */
async function prepareInRun(event: StoredEvent, db: Db, runs: RunReader, translator: RunTranslator): Promise<PreparedEvent | null> {
  const run = await runs.runOf(event);
  const whole = await runs.memo(run, 'translated', () => translator(run, db));
  if (!whole) return null;
  const positions = Math.min(run.length, Math.max(1, Math.ceil(whole.maxPerRecipient / HEARTBEAT_BASE)));
  const share = run.findIndex((e) => e.position === event.position) - (run.length - positions);
  if (share < 0) return null;
  if (positions === 1) return whole;
  return {
    audience: whole.audience,
    forUser: (recipient) => {
      const all = whole.forUser(recipient);
      // The last position takes whatever the ones before it could not hold.
      const end = share === positions - 1 ? all.length : (share + 1) * HEARTBEAT_BASE;
      return all.slice(share * HEARTBEAT_BASE, end);
    },
  };
}
