import type { Kysely } from 'kysely';

// The onboarding steps each user has dismissed, folded from OnboardingStepMarked.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('onboarding_steps')
    .addColumn('user_id', 'integer', (c) => c.notNull())
    .addColumn('onboarding_step', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('onboarding_steps_pk', ['user_id', 'onboarding_step'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('onboarding_steps').execute();
}
