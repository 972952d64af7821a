import { decideTyping, type TypingChannel, type TypingCommand, type TypingSender } from '../domain/typing/decider.js';
import type { UserRow } from '../read/users.js';
import { canReadStreamContent, isSubscribed } from '../visibility.js';
import { metadataOf, type RequestMeta, type ServiceContext } from './context.js';

export const typingStream = (userId: number) => `typing-${userId}`;

export interface TypingRequest {
  op: 'start' | 'stop';
  type: 'direct' | 'stream' | 'channel';
  to?: number[];
  stream_id?: number;
  topic?: string;
}

function senderOf(user: UserRow): TypingSender {
  const settings = user.settings as Record<string, unknown>;
  return {
    user_id: user.id,
    realm_id: user.realm_id,
    role: user.role,
    send_private_typing_notifications: settings.send_private_typing_notifications !== false,
    send_stream_typing_notifications: settings.send_stream_typing_notifications !== false,
  };
}

async function channelFor(ctx: ServiceContext, user: UserRow, streamId: number | undefined): Promise<TypingChannel | undefined> {
  if (streamId === undefined) return undefined;
  const stream = await ctx.db.selectFrom('streams').selectAll().where('id', '=', streamId).executeTakeFirst();
  if (!stream || stream.deactivated || stream.realm_id !== user.realm_id) return undefined;
  const subscribed = await isSubscribed(ctx.db, user.id, stream.id);
  const viewer = { user_id: user.id, role: user.role, realm_id: user.realm_id };
  return {
    id: stream.id,
    name: stream.name,
    invite_only: stream.invite_only,
    stream_post_policy: stream.stream_post_policy,
    readable: canReadStreamContent(viewer, stream, subscribed),
    subscribed,
  };
}

/** POST /typing: checks the request like the real server, then records it (queues deliver it while fresh). */
export async function sendTypingNotification(ctx: ServiceContext, meta: RequestMeta, user: UserRow, request: TypingRequest): Promise<void> {
  const sender = senderOf(user);
  let command: TypingCommand;
  if (request.type === 'direct') {
    const ids = [...new Set([...(request.to ?? []), user.id])];
    const rows = await ctx.db.selectFrom('users').select('id').where('id', 'in', ids).where('realm_id', '=', user.realm_id).execute();
    command = { type: 'SendTyping', sender, op: request.op, message_type: 'direct', to: request.to, known_user_ids: new Set(rows.map((r) => r.id)) };
  } else {
    command = {
      type: 'SendTyping',
      sender,
      op: request.op,
      message_type: 'stream',
      stream_id: request.stream_id,
      topic: request.topic,
      channel: await channelFor(ctx, user, request.stream_id),
    };
  }
  const events = decideTyping(command);
  await ctx.commands.run(metadataOf(meta), async () => ({
    appends: [{ streamId: typingStream(user.id), expectedVersion: undefined, events }],
    result: undefined,
  }));
}
