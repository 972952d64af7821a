import { randomUUID } from 'node:crypto';
import type { Config } from '../config.js';
import { createPlatform, type Platform } from '../platform.js';
import type { Projection } from '../projections-api.js';
import { getDefaultRealm, realmHost, type RealmRow } from '../read/realm.js';
import { getUserByEmail } from '../read/users.js';
import type { RequestMeta } from '../services/context.js';
import { eraseUser, type ErasedMessages, type ErasureResult } from '../services/erasure.js';
import { listLegalHolds, setLegalHold, type HoldScope, type LegalHold } from '../services/legal-holds.js';
import { ApiError } from '../domain/errors.js';

type Out = (line: string) => void;

/** The operator's own commands act on the (first) organization, with no acting user in the metadata. */
async function withRealm<T>(config: Config, projections: readonly Projection[], run: (platform: Platform, realm: RealmRow, meta: RequestMeta) => Promise<T>): Promise<T> {
  const platform = await createPlatform(config, { projections, startWorkers: true });
  try {
    const realm = await getDefaultRealm(platform.db);
    if (!realm) throw new Error('this database has no organization yet');
    const meta: RequestMeta = { actorId: null, realmId: realm.id, client: 'cli', requestId: randomUUID(), now: new Date() };
    try {
      return await run(platform, realm, meta);
    } catch (error) {
      // The service's coded errors are the operator's answer, without a stack.
      if (error instanceof ApiError) throw new Error(error.message);
      throw error;
    }
  } finally {
    await platform.close();
  }
}

/** `erase-user <email>`: the operator erases a person (docs/FORGETTING.md). */
export async function eraseUserCommand(
  config: Config,
  projections: readonly Projection[],
  out: Out,
  input: { email: string; messages: ErasedMessages; reason?: string },
): Promise<ErasureResult> {
  return withRealm(config, projections, async (platform, realm, meta) => {
    const user = await getUserByEmail(platform.db, realm.id, input.email, realmHost(realm));
    if (!user) throw new Error(`no user with the address ${input.email}`);
    const result = await eraseUser(platform, meta, null, user.id, { messages: input.messages, reason: input.reason ?? null });
    out(`erased user ${result.user_id}: identity key destroyed; messages ${input.messages === 'shred' ? `shredded: ${result.messages_shredded}, kept under legal hold: ${result.messages_held}` : 'kept'}`);
    return result;
  });
}

/** `legal-hold list|add|remove`: the CLI beside the /legal_holds API. */
export async function legalHoldCommand(
  config: Config,
  projections: readonly Projection[],
  out: Out,
  input: { action: 'list' } | { action: 'add' | 'remove'; scope: HoldScope; id: number; reason?: string },
): Promise<LegalHold[]> {
  return withRealm(config, projections, async (platform, realm, meta) => {
    if (input.action !== 'list') {
      if (!Number.isInteger(input.id)) throw new Error('the id must be a channel or user id (an integer)');
      await setLegalHold(platform, meta, null, realm.id, { scope: input.scope, subjectId: input.id, held: input.action === 'add', reason: input.reason ?? null });
      await platform.waitForProjections((await platform.store.head()).position);
      out(`${input.action === 'add' ? 'held' : 'released'}: ${input.scope} ${input.id}`);
    }
    const holds = await listLegalHolds(platform.db, realm.id);
    if (input.action === 'list') {
      if (holds.length === 0) out('no legal holds');
      for (const hold of holds) out(`${hold.scope} ${hold.subject_id}\tsince ${new Date(hold.since * 1000).toISOString()}${hold.reason ? `\t${hold.reason}` : ''}`);
    }
    return holds;
  });
}
