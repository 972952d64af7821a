import { metadataOf, type RequestMeta, type ServiceContext } from './context.js';
import { streamVersion } from './stream-version.js';

export const tutorialStream = (userId: number) => `tutorial-${userId}`;

/** Records the status every time, as the real server saves it every time. */
export async function setTutorialStatus(ctx: ServiceContext, meta: RequestMeta, userId: number, status: 'started' | 'finished'): Promise<void> {
  await ctx.commands.run(metadataOf(meta), async () => {
    const streamId = tutorialStream(userId);
    const version = await streamVersion(ctx, streamId);
    const events = [{ type: 'TutorialStatusChanged' as const, data: { user_id: userId, status } }];
    return { appends: [{ streamId, expectedVersion: version === 0 ? -1 : version, events }], result: undefined };
  });
}
