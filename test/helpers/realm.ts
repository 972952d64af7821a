import { randomUUID } from 'node:crypto';
import type { TestServer } from './server.js';

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
}
