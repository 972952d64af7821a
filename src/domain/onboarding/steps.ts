/**
 * The real server's onboarding steps at feature level 247: one-time notices only (its hotspots
 * were retired before this level), in the order it lists them.
 */
export const ONE_TIME_NOTICES = [
  'visibility_policy_banner',
  'intro_inbox_view_modal',
  'intro_recent_view_modal',
  'first_stream_created_banner',
  'jump_to_conversation_banner',
] as const;

export interface OnboardingStep {
  type: 'one_time_notice';
  name: string;
}

export class UnknownOnboardingStep extends Error {}

export function isOnboardingStep(name: string): boolean {
  return (ONE_TIME_NOTICES as readonly string[]).includes(name);
}

/** The steps still to show a user who has dismissed `seen`. */
export function nextOnboardingSteps(seen: Iterable<string>): OnboardingStep[] {
  const dismissed = new Set(seen);
  return ONE_TIME_NOTICES.filter((name) => !dismissed.has(name)).map((name) => ({ type: 'one_time_notice', name }));
}

/**
 * Marking a step: unknown names are refused with the real server's wording; marking a step twice
 * still records (and announces) it, as the real server sends its event every time.
 */
export function decideMarkOnboardingStep(userId: number, step: string, seen: readonly string[]) {
  if (!isOnboardingStep(step)) throw new UnknownOnboardingStep(`Unknown onboarding_step: ${step}`);
  const after = seen.includes(step) ? [...seen] : [...seen, step];
  return [{ type: 'OnboardingStepMarked' as const, data: { user_id: userId, onboarding_step: step, seen: after } }];
}
