import type { Db } from '../db/database.js';
import type { Transaction } from 'kysely';
import type { Database } from '../db/schema.js';

/** The onboarding steps a user has dismissed, in the order they were stored. */
export async function seenOnboardingSteps(db: Db | Transaction<Database>, userId: number): Promise<string[]> {
  const rows = await db.selectFrom('onboarding_steps').select('onboarding_step').where('user_id', '=', userId).execute();
  return rows.map((r) => r.onboarding_step);
}
