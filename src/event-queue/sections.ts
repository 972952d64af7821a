import type { Db } from '../db/database.js';
import type { Transaction } from 'kysely';
import type { Database } from '../db/schema.js';
import type { UserRow } from '../read/users.js';
import type { RealmRow } from '../read/realm.js';
import type { QueueOptions } from './types.js';
import type { Config } from '../config.js';
import type { LocalLastSeen } from '../read/presence.js';

export interface SectionContext {
  trx: Transaction<Database> | Db;
  user: UserRow;
  realm: RealmRow;
  options: QueueOptions;
  config: Config;
  /** Section names the client asked for (fetch_event_types), or null for all. */
  wanted: ReadonlySet<string> | null;
  /** Last-seen times this process's pings moved and has not written yet. */
  presenceLocal?: LocalLastSeen;
}

export type SectionFetcher = (ctx: SectionContext) => Promise<Record<string, unknown>>;

/** /register state sections by name, in registration order. Each area registers its own. */
const sections = new Map<string, SectionFetcher>();

export function registerSection(name: string, fetcher: SectionFetcher): void {
  sections.set(name, fetcher);
}

export async function fetchSections(ctx: SectionContext): Promise<Record<string, unknown>> {
  const state: Record<string, unknown> = {};
  for (const [name, fetcher] of sections) {
    if (ctx.wanted && !ctx.wanted.has(name)) continue;
    Object.assign(state, await fetcher(ctx));
  }
  return state;
}

/** The fetcher registered for a section, if any (a spectator's state reuses those that read no user data). */
export function sectionFetcher(name: string): SectionFetcher | undefined {
  return sections.get(name);
}

export function knownSections(): string[] {
  return [...sections.keys()];
}
