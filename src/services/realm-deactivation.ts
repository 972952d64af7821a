import type { RealmDeactivated, RealmReactivated } from '../domain/realm-deactivation/events.js';
import type { QueueDeleted } from '../domain/queues/events.js';
import type { StreamAppend } from '../eventstore/types.js';
import { getRealm } from '../read/realm.js';
import { realmStream } from './bootstrap.js';
import { metadataOf, type RequestMeta, type ServiceContext } from './context.js';
import { streamVersion } from './stream-version.js';

const queueStream = (queueId: string) => `queue-${queueId}`;

/**
 * POST /realm/deactivate: one command appends the deactivation and then the end of every event
 * queue of the organization. A long-poll blocked at that moment still receives the `realm`
 * `deactivated` event (it is before the ends in the log); every later request is refused.
 */
export async function deactivateRealm(ctx: ServiceContext, meta: RequestMeta, realmId: number): Promise<void> {
  await ctx.commands.run(metadataOf(meta), async () => {
    const queues = await ctx.db.selectFrom('event_queues').select(['id', 'user_id']).where('realm_id', '=', realmId).execute();
    const deactivated: RealmDeactivated = { type: 'RealmDeactivated', data: { realm_id: realmId, reason: 'owner_request' } };
    const appends: StreamAppend[] = [{ streamId: realmStream(realmId), expectedVersion: await streamVersion(ctx, realmStream(realmId)), events: [deactivated] }];
    for (const q of queues) {
      const ended: QueueDeleted = { type: 'QueueDeleted', data: { queue_id: q.id, user_id: q.user_id, reason: 'realm_deactivated' } };
      appends.push({ streamId: queueStream(q.id), expectedVersion: 1, events: [ended] });
    }
    return { appends, result: undefined };
  });
}

/** The CLI's reactivate-realm. Answers false when the organization was not deactivated. */
export async function reactivateRealm(ctx: ServiceContext, meta: RequestMeta, realmId: number): Promise<boolean> {
  const { result } = await ctx.commands.run(metadataOf(meta), async () => {
    const version = await streamVersion(ctx, realmStream(realmId));
    const realm = await getRealm(ctx.db, realmId);
    if (!realm?.deactivated) return { appends: [], result: false };
    const reactivated: RealmReactivated = { type: 'RealmReactivated', data: { realm_id: realmId } };
    return { appends: [{ streamId: realmStream(realmId), expectedVersion: version, events: [reactivated] }], result: true };
  });
  return result;
}
