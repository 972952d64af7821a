import { errors } from '../domain/errors.js';
import { getActiveStreamByName, getStreamById, getSubscription } from '../read/channels.js';
import type { UserRow } from '../read/users.js';
import type { RealmRow } from '../read/realm.js';
import { canJoinStream, type StreamRow } from '../visibility.js';
import { setUserTopic } from './channels.js';
import type { RequestMeta, ServiceContext } from './context.js';

/** The user_topics visibility policies the deprecated endpoint maps onto. */
const MUTED = 1;
const INHERIT = 0;

export interface MutedTopicChange {
  op: 'add' | 'remove';
  topic: string;
  stream?: string;
  stream_id?: number;
}

/**
 * Muting needs access to the channel (named by id or name, not both); unmuting only that the
 * channel exists in the realm, so a topic muted in a channel the user has since lost can still be
 * cleared. "add" sets the muted policy and "remove" clears it, whatever the topic had before, as
 * the real server does since feature level 170.
 */
async function channelFor(ctx: ServiceContext, user: UserRow, realm: RealmRow, change: MutedTopicChange): Promise<StreamRow> {
  const notMuted = () => errors.badRequest('Topic is not muted');
  const stream = change.stream !== undefined ? await getActiveStreamByName(ctx.db, realm.id, change.stream) : await getStreamById(ctx.db, change.stream_id!);
  const inRealm = stream !== undefined && stream.realm_id === realm.id;
  if (change.op === 'remove') {
    if (!inRealm) throw notMuted();
    return stream;
  }
  const denied = () => (change.stream !== undefined ? errors.badRequest(`Invalid channel name '${change.stream}'`) : errors.invalidChannelId());
  if (!inRealm || stream.deactivated) throw denied();
  const subscribed = (await getSubscription(ctx.db, user.id, stream.id))?.active === true;
  if (!canJoinStream({ user_id: user.id, role: user.role, realm_id: realm.id }, stream, subscribed)) throw denied();
  return stream;
}

/** PATCH /users/me/subscriptions/muted_topics (deprecated; POST /user_topics replaces it). */
export async function updateMutedTopic(ctx: ServiceContext, meta: RequestMeta, user: UserRow, realm: RealmRow, change: MutedTopicChange): Promise<void> {
  if (change.stream !== undefined && change.stream_id !== undefined) throw errors.badRequest("Please choose one: 'stream' or 'stream_id'.");
  if (change.stream === undefined && change.stream_id === undefined) throw errors.badRequest("Please supply 'stream'.");
  const stream = await channelFor(ctx, user, realm, change);
  await setUserTopic(ctx, meta, user, realm, stream.id, change.topic, change.op === 'add' ? MUTED : INHERIT, false);
}
