import { errors } from '../errors.js';
import { Role, isAdminRole, isModeratorOrAbove } from '../roles.js';
import type { TypingEvent } from './events.js';

export interface TypingSender {
  user_id: number;
  realm_id: number;
  role: number;
  send_private_typing_notifications: boolean;
  send_stream_typing_notifications: boolean;
}

/** What the service looked up for a channel notification: the channel as the sender may see it. */
export interface TypingChannel {
  id: number;
  name: string;
  invite_only: boolean;
  stream_post_policy: number;
  /** The sender may read the channel (subscriber, or public for a non-guest, or web-public). */
  readable: boolean;
  subscribed: boolean;
}

export type TypingCommand = {
  type: 'SendTyping';
  sender: TypingSender;
  op: 'start' | 'stop';
} & (
  | { message_type: 'direct'; to: number[] | undefined; known_user_ids: ReadonlySet<number> }
  | { message_type: 'stream'; stream_id: number | undefined; topic: string | undefined; channel: TypingChannel | undefined }
);

const StreamPostPolicy = { ANY: 1, ADMINS: 2, FULL_MEMBERS: 3, MODERATORS: 4 } as const;

/** The real server's rule for who may post to a channel (typing needs the same permission). */
export function checkMayPostToChannel(sender: TypingSender, channel: TypingChannel): void {
  switch (channel.stream_post_policy) {
    case StreamPostPolicy.ADMINS:
      if (!isAdminRole(sender.role)) throw errors.badRequest('Only organization administrators can send to this channel.');
      break;
    case StreamPostPolicy.MODERATORS:
      if (!isModeratorOrAbove(sender.role)) throw errors.badRequest('Only organization administrators and moderators can send to this channel.');
      break;
    case StreamPostPolicy.FULL_MEMBERS:
      if (sender.role === Role.GUEST) throw errors.badRequest('Guests cannot send to this channel.');
      break;
    default:
      break;
  }
  // Everyone may post to a public channel, except guests, who need a subscription.
  if (!channel.invite_only && sender.role !== Role.GUEST) return;
  if (channel.subscribed) return;
  throw errors.badRequest(`Not authorized to send to channel '${channel.name}'`);
}

/** Pure: a typing request → one TypingStarted/TypingStopped event, or the real server's error. */
export function decideTyping(command: TypingCommand): TypingEvent[] {
  const { sender } = command;
  const type = command.op === 'start' ? 'TypingStarted' : 'TypingStopped';
  const base = { sender_id: sender.user_id, realm_id: sender.realm_id };
  if (command.message_type === 'stream') {
    if (command.stream_id === undefined) throw errors.badRequest('Missing stream_id');
    if (command.topic === undefined) throw errors.badRequest('Missing topic');
    if (!sender.send_stream_typing_notifications) throw errors.badRequest('User has disabled typing notifications for stream messages');
    const channel = command.channel;
    if (!channel || !channel.readable) throw errors.badRequest('Invalid channel ID');
    checkMayPostToChannel(sender, channel);
    return [{ type, data: { ...base, message_type: 'stream', recipient_ids: [], stream_id: channel.id, topic: command.topic } }];
  }
  if (command.to === undefined) throw errors.badRequest("Missing 'to' argument");
  if (command.to.length === 0) throw errors.badRequest("Empty 'to' list");
  if (!sender.send_private_typing_notifications) throw errors.badRequest('User has disabled typing notifications for direct messages');
  const recipients = [...command.to];
  if (!recipients.includes(sender.user_id)) recipients.push(sender.user_id);
  for (const id of recipients) {
    if (!command.known_user_ids.has(id)) throw errors.badRequest(`Invalid user ID ${id}`);
  }
  const recipient_ids = [...new Set(recipients)];
  return [{ type, data: { ...base, message_type: 'direct', recipient_ids, stream_id: null, topic: null } }];
}
