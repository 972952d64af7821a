import { decidePush, type PushCommand } from '../domain/push/decider.js';
import { metadataOf, type RequestMeta, type ServiceContext } from './context.js';
import { streamVersion } from './stream-version.js';

export const pushStream = (userId: number) => `push-${userId}`;

/** Device tokens are only recorded: nothing is sent to an outside push service. */
export async function changePushDevices(ctx: ServiceContext, meta: RequestMeta, userId: number, command: PushCommand): Promise<void> {
  await ctx.commands.run(metadataOf(meta), async () => {
    const streamId = pushStream(userId);
    const version = await streamVersion(ctx, streamId);
    const rows = await ctx.db.selectFrom('push_devices').select(['token', 'kind']).where('user_id', '=', userId).execute();
    const events = decidePush(command, { user_id: userId, tokens: rows });
    return { appends: [{ streamId, expectedVersion: version === 0 ? -1 : version, events }], result: undefined };
  });
}
