/** Table of migration 0175: the onboarding steps each user has dismissed. */
export interface OnboardingStepsTable {
  user_id: number;
  onboarding_step: string;
}

export interface OnboardingStepsTables {
  onboarding_steps: OnboardingStepsTable;
}
