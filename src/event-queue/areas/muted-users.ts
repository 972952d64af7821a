import type { DataOf } from '../../domain/events.js';
import { listMutedUsers } from '../../read/muted-users.js';
import { registerSection } from '../sections.js';
import { registerTranslator } from '../translators.js';

registerSection('muted_users', async ({ trx, user }) => ({ muted_users: await listMutedUsers(trx, user.id) }));

// Both carry the whole new list, which is what the client event holds.
for (const type of ['UserMuted', 'UserUnmuted'] as const) {
  registerTranslator(type, async (event) => {
    const d = event.data as DataOf<typeof type>;
    return { audience: new Set([d.user_id]), forUser: () => [{ type: 'muted_users', muted_users: d.muted_users.map((m) => ({ ...m })) }] };
  });
}
