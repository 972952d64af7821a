import type { Event } from '../event-types.js';

/**
 * A user dismissed an onboarding step (POST /users/me/onboarding_steps). `seen` is every step the
 * user has dismissed so far, this one included: the client event lists what is left, and carrying
 * the whole set lets a queue translate it without reading later state.
 */
export type OnboardingStepMarked = Event<'OnboardingStepMarked', { user_id: number; onboarding_step: string; seen: string[] }>;

export type OnboardingEvent = OnboardingStepMarked;
