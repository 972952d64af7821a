import { decideMarkOnboardingStep } from '../domain/onboarding/steps.js';
import { seenOnboardingSteps } from '../read/onboarding-steps.js';
import { metadataOf, type RequestMeta, type ServiceContext } from './context.js';
import { streamVersion } from './stream-version.js';

export const onboardingStream = (userId: number) => `onboarding-${userId}`;

export async function markOnboardingStep(ctx: ServiceContext, meta: RequestMeta, userId: number, step: string): Promise<void> {
  await ctx.commands.run(metadataOf(meta), async () => {
    const streamId = onboardingStream(userId);
    const version = await streamVersion(ctx, streamId);
    const events = decideMarkOnboardingStep(userId, step, await seenOnboardingSteps(ctx.db, userId));
    return { appends: [{ streamId, expectedVersion: version === 0 ? -1 : version, events }], result: undefined };
  });
}
