import { ApiError, errors } from '../errors.js';
import { Role, isAdminRole, isModeratorOrAbove } from '../roles.js';
import type { MessageEdited, MessageFlagsChanged, MessageSent, MessagesDeleted, MovedReceptions, ReactionAdded, ReactionRemoved } from './events.js';

export const MAX_MESSAGE_LENGTH = 10_000;
export const MAX_TOPIC_LENGTH = 60;
const TRUNCATED = '\n[message truncated]';

/** The real server truncates over-long content and topics instead of rejecting them. */
export function normalizeContent(content: string): string {
  if (content.includes('\u0000')) throw errors.badRequest('Message must not contain null bytes');
  // As the real server: trailing whitespace and leading line breaks go (leading spaces may be indented code).
  const trimmed = content.replace(/\s+$/, '').replace(/^\n+/, '');
  if (trimmed.trim() === '') throw errors.badRequest('Message must not be empty');
  if ([...trimmed].length > MAX_MESSAGE_LENGTH) return [...trimmed].slice(0, MAX_MESSAGE_LENGTH - TRUNCATED.length).join('') + TRUNCATED;
  return trimmed;
}

export function normalizeTopic(topic: string, mandatoryTopics: boolean): string {
  if (topic.includes('\u0000')) throw errors.badRequest('Topic must not contain null bytes');
  let t = topic.trim().replace(/[\r\n]+/g, ' ');
  if (t === '' || t === '(no topic)') {
    if (mandatoryTopics) throw errors.badRequest('Topics are required in this organization');
    t = '(no topic)';
  }
  if ([...t].length > MAX_TOPIC_LENGTH) t = [...t].slice(0, MAX_TOPIC_LENGTH - 3).join('') + '...';
  return t;
}

export interface Sender extends PolicyActor {
  user_id: number;
  role: number;
  is_bot: boolean;
  /** The server's own bots (Notification Bot, Welcome Bot) post to any channel, as on the real server. */
  is_system_bot?: boolean;
  /** false while a member is within the organization's waiting period (waiting_period_threshold); absent: past it */
  is_full_member?: boolean;
}

export interface TargetStream {
  stream_id: number;
  name: string;
  invite_only: boolean;
  is_web_public: boolean;
  stream_post_policy: number;
  deactivated: boolean;
}

/** Who may post to a channel: subscription, privacy, guests and stream_post_policy. */
export function checkCanPost(sender: Sender, stream: TargetStream, subscribed: boolean): void {
  if (stream.deactivated) throw new ApiError('STREAM_DOES_NOT_EXIST', 400, `Channel '${stream.name}' does not exist`, { stream: stream.name });
  if (sender.is_system_bot) return;
  if (!subscribed) {
    if (stream.invite_only || sender.role === Role.GUEST) throw errors.badRequest(`Not authorized to send to channel '${stream.name}'`);
  }
  switch (stream.stream_post_policy) {
    case 2:
      if (!isAdminRole(sender.role)) throw errors.badRequest('Only organization administrators can send to this channel.');
      break;
    case 3:
      // Moderators and above are never new members.
      if (sender.role === Role.GUEST || (sender.is_full_member === false && !isModeratorOrAbove(sender.role))) {
        throw errors.badRequest('New members cannot send to this channel.');
      }
      break;
    case 4:
      if (!isModeratorOrAbove(sender.role)) throw errors.badRequest('Only organization administrators and moderators can send to this channel.');
      break;
    default:
      break;
  }
}

/** A rendered, addressed message ready to become MessageSent; everything the decider needs is here. */
export type SendMessageCommand = MessageSent['data'];

export function decideSendMessage(command: SendMessageCommand): MessageSent[] {
  return [{ type: 'MessageSent', data: command }];
}

export interface MessageState {
  message_id: number;
  realm_id: number;
  sender_id: number;
  stream_id: number | null;
  topic: string;
  content: string;
  rendered_content: string;
  date_sent: number;
  dm_user_ids: number[];
}

export interface EditPolicy {
  allow_message_editing: boolean;
  message_content_edit_limit_seconds: number | null;
  /** 1 members, 2 administrators, 3 full members, 4 moderators, 5 everyone, 6 nobody */
  edit_topic_policy: number;
  move_messages_between_streams_policy?: number;
  /** null: no limit (moderators and administrators are never limited) */
  move_messages_within_stream_limit_seconds?: number | null;
  move_messages_between_streams_limit_seconds?: number | null;
}

/** The real server's grace period on top of the edit and move time limits. */
const EDIT_LIMIT_BUFFER_SECONDS = 20;

/** Refusal of a change_all move when older messages of the topic are past the limit. */
export function moveTimeLimitExceeded(allowed: number[], total: number): ApiError {
  return new ApiError('MOVE_MESSAGES_TIME_LIMIT_EXCEEDED', 400,
    `You only have permission to move the ${allowed.length}/${total} most recent messages in this topic.`, {
      first_message_id_allowed_to_move: allowed.length > 0 ? Math.min(...allowed) : null,
      total_messages_allowed_to_move: allowed.length,
      total_messages_in_topic: total,
    });
}

/** Who an organization policy check looks at: the role, and for "full members" whether the waiting period is over. */
export interface PolicyActor {
  role: number;
  /** false for a member who joined less than waiting_period_threshold days ago; absent: a full member */
  is_full_member?: boolean;
}

/**
 * An organization's "who may" policy, as the real server reads it: nobody (6) means nobody, not even
 * owners; everyone (5) includes guests; otherwise owners, administrators and moderators rank above
 * the policy's threshold, and guests below every threshold.
 */
export function allowedByPolicy(actor: PolicyActor, policy: number): boolean {
  if (policy === 6) return false;
  if (policy === 5) return true;
  if (actor.role === Role.OWNER) return true;
  if (policy === 7) return false;
  if (isAdminRole(actor.role)) return true;
  if (policy === 2) return false;
  if (isModeratorOrAbove(actor.role)) return true;
  if (policy === 4) return false;
  if (actor.role === Role.GUEST) return false;
  if (policy === 1) return true;
  return actor.is_full_member !== false;
}

/** Content as an edit stores it: blank content becomes "(deleted)", as on the real server. */
export function normalizeEditedContent(content: string): string {
  return normalizeContent(content.trimEnd() === '' ? '(deleted)' : content);
}

/** Why a topic is refused on an edit ("Topic can't be empty!", or the 1-based position of an unprintable character). */
function checkEditedTopic(topic: string): void {
  if (topic === '') throw errors.badRequest("Topic can't be empty!");
  const chars = [...topic];
  const bad = chars.findIndex((c) => /[\p{Cc}\p{Cs}]/u.test(c) || isNonCharacter(c.codePointAt(0)!));
  if (bad >= 0) throw errors.badRequest(`Invalid character in topic, at position ${bad + 1}!`);
}

/** Unicode's 66 non-characters: U+FDD0..U+FDEF and the last two code points of every plane. */
const isNonCharacter = (cp: number) => (cp >= 0xfdd0 && cp <= 0xfdef) || (cp & 0xfffe) === 0xfffe;

export interface EditCommand {
  actor: Sender;
  now: number;
  /** the new content, rendered (null: content not given) */
  content: { content: string; rendered_content: string; is_me_message: boolean; has_link: boolean; has_image: boolean; has_attachment: boolean;
    mentioned_user_ids: number[]; prev_mentioned_user_ids: number[]; stream_wildcard: boolean; topic_wildcard: boolean; topic_wildcard_user_ids?: number[];
    alerted_user_ids?: number[]; prev_alerted_user_ids?: number[]; attachment_paths: string[]; prev_attachment_path_ids?: string[] } | null;
  /** the topic as requested (null: not given); the decider strips, checks and truncates it */
  new_topic: string | null;
  /** the channel as requested (null: not given, or the message's own channel) */
  new_stream_id: number | null;
  /** why the acting user may not move messages into new_stream_id (no access, or may not post there); null: may */
  target_refusal?: ApiError | null;
  propagate_mode: 'change_one' | 'change_later' | 'change_all';
  /** whether the message carries a widget (a poll, a todo list): its content cannot be edited */
  is_widget?: boolean;
  /** ids of the messages the move applies to (the message itself first) */
  moved_ids: number[];
  /** date_sent of each of moved_ids (same order), for the move time limits */
  moved_dates?: number[];
  /** a move between channels: the moved messages' message_moved_receptions rows now (see MessageEdited) */
  prior_moved_receptions?: MovedReceptions;
  policy: EditPolicy;
}

/** The topic an edit moves to: stripped and truncated; null when not given or the same as now. */
export function requestedTopic(topic: string | null, current: string): string | null {
  if (topic === null) return null;
  const stripped = topic.trim();
  return stripped === current ? null : stripped;
}

/**
 * PATCH /messages/{id}, in the real server's order of checks: the content (editing allowed, own
 * message, time limit), the shape of the request, the topic (policy, time limit), the channel
 * (policy, access to the target, time limit), then a change_all move's time limit.
 */
export function decideEditMessage(command: EditCommand, state: MessageState): MessagesEditedResult {
  const { actor } = command;
  const age = command.now - state.date_sent;
  if (command.content) {
    if (!command.policy.allow_message_editing) throw errors.badRequest('Your organization has turned off message editing');
    if (actor.user_id !== state.sender_id) throw errors.badRequest("You don't have permission to edit this message");
    const limit = command.policy.message_content_edit_limit_seconds;
    if (limit !== null && limit > 0 && age > limit + EDIT_LIMIT_BUFFER_SECONDS) {
      throw errors.badRequest('The time limit for editing this message has passed');
    }
  }
  const stripped = requestedTopic(command.new_topic, state.topic);
  const newStreamId = command.new_stream_id !== null && command.new_stream_id !== state.stream_id ? command.new_stream_id : null;
  if (command.content === null && stripped === null && newStreamId === null) throw errors.badRequest('Nothing to change');
  if (state.stream_id === null) {
    if (command.new_stream_id !== null) throw errors.badRequest('Direct messages cannot be moved to channels.');
    if (command.new_topic !== null) throw errors.badRequest('Direct messages cannot have topics.');
  }
  if (command.propagate_mode !== 'change_one' && stripped === null && newStreamId === null) {
    throw errors.badRequest('Invalid propagate_mode without topic edit');
  }
  if (stripped !== null) checkEditedTopic(stripped);
  if (newStreamId !== null && command.content !== null) throw errors.badRequest('Cannot change message content while changing channel');
  if (command.content !== null && command.is_widget) throw errors.badRequest('Widgets cannot be edited.');
  const newTopic = stripped === null ? null : truncateTopic(stripped);
  const limits = moveLimits(command);
  if (newTopic !== null) {
    if (!allowedByPolicy(actor, command.policy.edit_topic_policy)) throw errors.badRequest("You don't have permission to edit this message");
    if (limits.topic !== null && age > limits.topic) throw errors.badRequest("The time limit for editing this message's topic has passed.");
  }
  if (newStreamId !== null) {
    if (!allowedByPolicy(actor, command.policy.move_messages_between_streams_policy ?? 1)) throw errors.badRequest("You don't have permission to move this message");
    if (command.target_refusal) throw command.target_refusal;
    if (limits.stream !== null && age > limits.stream) throw errors.badRequest("The time limit for editing this message's channel has passed");
  }
  const moved = newTopic !== null || newStreamId !== null;
  if (moved) checkChangeAllTimeLimit(command, newTopic !== null ? limits.topic : null, newStreamId !== null ? limits.stream : null);
  const c = command.content;
  return [{
    type: 'MessageEdited',
    data: {
      message_id: state.message_id,
      message_ids: moved ? command.moved_ids : [state.message_id],
      realm_id: state.realm_id,
      user_id: actor.user_id,
      edit_timestamp: command.now,
      stream_id: state.stream_id,
      orig_topic: state.topic,
      content: c ? c.content : null,
      rendered_content: c ? c.rendered_content : null,
      prev_content: c ? state.content : null,
      prev_rendered_content: c ? state.rendered_content : null,
      is_me_message: c ? c.is_me_message : null,
      has_link: c ? c.has_link : null,
      has_image: c ? c.has_image : null,
      has_attachment: c ? c.has_attachment : null,
      mentioned_user_ids: c ? c.mentioned_user_ids : null,
      prev_mentioned_user_ids: c ? c.prev_mentioned_user_ids : null,
      stream_wildcard: c ? c.stream_wildcard : null,
      topic_wildcard: c ? c.topic_wildcard : null,
      topic_wildcard_user_ids: c ? c.topic_wildcard_user_ids ?? [] : null,
      ...(c ? { alerted_user_ids: c.alerted_user_ids ?? [], prev_alerted_user_ids: c.prev_alerted_user_ids ?? [] } : {}),
      attachment_paths: c ? c.attachment_paths : null,
      ...(c?.prev_attachment_path_ids ? { prev_attachment_path_ids: c.prev_attachment_path_ids } : {}),
      new_topic: newTopic,
      new_stream_id: newStreamId,
      propagate_mode: command.propagate_mode,
      ...(newStreamId !== null ? { prior_moved_receptions: command.prior_moved_receptions ?? [] } : {}),
      dm_user_ids: state.dm_user_ids,
    },
  }];
}

type MessagesEditedResult = MessageEdited[];

/** A topic cut to the maximum length, as when sending. */
function truncateTopic(topic: string): string {
  return [...topic].length > MAX_TOPIC_LENGTH ? [...topic].slice(0, MAX_TOPIC_LENGTH - 3).join('') + '...' : topic;
}

/** The move deadlines (limit plus grace) that bind the actor; null: none (moderators and above are never limited). */
function moveLimits(command: EditCommand): { topic: number | null; stream: number | null } {
  if (isModeratorOrAbove(command.actor.role)) return { topic: null, stream: null };
  const withBuffer = (limit: number | null | undefined) => (limit === null || limit === undefined ? null : limit + EDIT_LIMIT_BUFFER_SECONDS);
  return {
    topic: withBuffer(command.policy.move_messages_within_stream_limit_seconds),
    stream: withBuffer(command.policy.move_messages_between_streams_limit_seconds),
  };
}

/**
 * A change_all move by a member below moderator: every message of the topic (that the actor can
 * reach) must be within the stricter applicable deadline, else the refusal says how many may move.
 */
function checkChangeAllTimeLimit(command: EditCommand, topicDeadline: number | null, streamDeadline: number | null): void {
  if (command.propagate_mode !== 'change_all' || !command.moved_dates) return;
  const deadlines = [topicDeadline, streamDeadline].filter((x): x is number => x !== null);
  if (deadlines.length === 0) return;
  const deadline = Math.min(...deadlines);
  const allowed = command.moved_ids.filter((_, i) => command.moved_dates![i]! > command.now - deadline);
  if (allowed.length < command.moved_ids.length) throw moveTimeLimitExceeded(allowed, command.moved_ids.length);
}

export interface DeletePolicy {
  /** 1 members, 2 administrators, 3 full members, 4 moderators, 5 everyone */
  delete_own_message_policy: number;
  message_content_delete_limit_seconds: number | null;
}

/**
 * DELETE /messages/{id}, as the real server decides: administrators delete any message; others
 * their own or their bots' (`senderBotOwnerId`), when delete_own_message_policy lets them, within
 * message_content_delete_limit_seconds (no grace period).
 */
export function decideDeleteMessage(actor: Sender, now: number, state: MessageState, policy: DeletePolicy, senderBotOwnerId: number | null = null): MessagesDeleted[] {
  if (!isAdminRole(actor.role)) {
    if (actor.user_id !== state.sender_id && actor.user_id !== senderBotOwnerId) throw errors.badRequest("You don't have permission to delete this message");
    if (!allowedByPolicy(actor, policy.delete_own_message_policy)) throw errors.badRequest("You don't have permission to delete this message");
    const limit = policy.message_content_delete_limit_seconds;
    if (limit !== null && now - state.date_sent > limit) throw errors.badRequest('The time limit for deleting this message has passed');
  }
  return [deletion([state.message_id], state)];
}

export function deletion(ids: number[], state: Pick<MessageState, 'realm_id' | 'stream_id' | 'topic' | 'dm_user_ids'>): MessagesDeleted {
  return {
    type: 'MessagesDeleted',
    data: {
      realm_id: state.realm_id,
      message_ids: ids,
      message_type: state.stream_id === null ? 'private' : 'stream',
      stream_id: state.stream_id,
      topic: state.stream_id === null ? null : state.topic,
      dm_user_ids: state.dm_user_ids,
    },
  };
}

export interface ReactionCommand {
  op: 'add' | 'remove';
  message_id: number;
  user_id: number;
  emoji_name: string;
  emoji_code: string;
  reaction_type: string;
}

/** `existing`: whether the user already has this reaction (by type and code) on the message. */
export function decideReaction(command: ReactionCommand, existing: boolean): Array<ReactionAdded | ReactionRemoved> {
  const data = {
    message_id: command.message_id,
    user_id: command.user_id,
    emoji_name: command.emoji_name,
    emoji_code: command.emoji_code,
    reaction_type: command.reaction_type,
  };
  if (command.op === 'add') {
    if (existing) throw new ApiError('REACTION_ALREADY_EXISTS', 400, 'Reaction already exists.');
    return [{ type: 'ReactionAdded', data }];
  }
  if (!existing) throw new ApiError('REACTION_DOES_NOT_EXIST', 400, "Reaction doesn't exist.");
  return [{ type: 'ReactionRemoved', data }];
}

/**
 * A flag change. By default one that changes nothing is no event (marking a channel or a muted
 * user's messages read); POST /messages/flags announces it anyway (`announceEmpty`), as the real
 * server sends its update_message_flags event whatever changed.
 */
export function decideFlags(data: MessageFlagsChanged['data'], options: { announceEmpty?: boolean } = {}): MessageFlagsChanged[] {
  if (data.message_ids.length === 0 && data.read_through === null && !options.announceEmpty) return [];
  return [{ type: 'MessageFlagsChanged', data }];
}
