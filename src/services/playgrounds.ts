import { decidePlaygrounds, type PlaygroundCommand } from '../domain/playgrounds/decider.js';
import { listPlaygroundRows } from '../read/playgrounds.js';
import { metadataOf, type RequestMeta, type ServiceContext } from './context.js';
import { streamVersion } from './stream-version.js';

export const playgroundsStream = (realmId: number) => `playgrounds-${realmId}`;

export async function changePlaygrounds(ctx: ServiceContext, meta: RequestMeta, command: PlaygroundCommand): Promise<void> {
  await ctx.commands.run(metadataOf(meta), async () => {
    const streamId = playgroundsStream(meta.realmId);
    const version = await streamVersion(ctx, streamId);
    const playgrounds = await listPlaygroundRows(ctx.db, meta.realmId);
    const events = decidePlaygrounds(command, { realm_id: meta.realmId, playgrounds });
    return { appends: [{ streamId, expectedVersion: version === 0 ? -1 : version, events }], result: undefined };
  });
}
