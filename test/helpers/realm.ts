import { randomUUID } from 'node:crypto';
import type { TestServer } from './server.js';
import { syncFullMembers } from '../../src/services/full-members.js';

/**
 * Changes organization properties the way the server would: an event in the log (there is no
 * realm-settings endpoint yet), so caches keyed on the log position see the change.
 */
export async function setRealmProperties(s: TestServer, changes: Record<string, unknown>): Promise<void> {
  const metadata = { actor_id: s.owner.id, realm_id: 1, client: 'test', request_id: randomUUID(), time: new Date().toISOString() };
  await s.platform.commands.run(metadata, async () => ({
    appends: [{ streamId: 'realm-1', expectedVersion: undefined, events: [{ type: 'RealmPropertiesChanged', data: { realm_id: 1, changes } }] }],
    result: undefined,
  }));
  // As PATCH /realm: a new waiting period moves members into or out of role:fullmembers at once.
  if ('waiting_period_threshold' in changes) {
    await syncFullMembers(s.platform, { actorId: s.owner.id, realmId: 1, client: 'test', requestId: randomUUID(), now: new Date() });
  }
}
