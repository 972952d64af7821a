import { ApiError, errors } from '../errors.js';
import { assertNever } from '../event-types.js';
import type { DraftData, DraftEvent } from './events.js';
import { normalizeContent } from '../messages/decider.js';

export const MAX_TOPIC_LENGTH = 60;

/** A draft's topic as the real server keeps it: as typed, and cut to 57 characters and "..." past 60. */
function truncateTopic(topic: string): string {
  const characters = [...topic];
  return characters.length > MAX_TOPIC_LENGTH ? characters.slice(0, MAX_TOPIC_LENGTH - 3).join('') + '...' : topic;
}

/** A draft as the client sends it (not yet validated). */
export type DraftInput = Record<string, unknown>;

/** The drafts of one user: enough to decide any command on them. */
export interface DraftsState {
  user_id: number;
  sync_enabled: boolean;
  draft_ids: readonly number[];
}

/**
 * What the service found out about a draft's recipients (reading channels and users is I/O):
 * whether the channel or each user id is one the author may address.
 */
export interface RecipientCheck {
  channelOk(streamId: number): boolean;
  userOk(userId: number): boolean;
  /** The address to name in the error when the user exists but is deactivated; undefined otherwise. */
  deactivatedEmail(userId: number): string | undefined;
}


export type DraftCommand =
  | { type: 'CreateDrafts'; drafts: readonly DraftInput[]; ids: readonly number[]; now: number; recipients: RecipientCheck }
  | { type: 'EditDraft'; draft_id: number; draft: DraftInput; now: number; recipients: RecipientCheck }
  | { type: 'DeleteDraft'; draft_id: number }
  | { type: 'DeleteAllDrafts' };

export const draftDoesNotExist = () => new ApiError('BAD_REQUEST', 404, 'Draft does not exist');
export const draftsDisabled = () => errors.badRequest('User has disabled synchronizing drafts.');

const isInt = (x: unknown): x is number => typeof x === 'number' && Number.isInteger(x);

/** A draft of the right shape, before its recipients and values are checked. */
export interface DraftShape {
  type: DraftData['type'];
  to: number[];
  topic: string;
  content: string;
  timestamp: number | null;
}

/** The parameter parser's part: every field of the right type, no unknown key (checked before the draft is looked up). */
export function checkDraftShape(input: DraftInput, where: string): DraftShape {
  // The shape is checked field by field in the real server's order (type, to, topic, content,
  // timestamp), then unknown keys; each error worded as its parameter parser words it.
  if (!input || typeof input !== 'object' || Array.isArray(input)) throw errors.badRequest(`${where} is not a dict`);
  const field = (key: string) => `${where}["${key}"]`;
  const present = (key: string) => {
    if (!(key in input)) throw errors.badRequest(`${field(key)} key is missing`);
    return input[key];
  };
  const type = present('type');
  if (type !== '' && type !== 'stream' && type !== 'private') throw errors.badRequest(`Invalid ${field('type')}`);
  const to = present('to');
  if (!Array.isArray(to)) throw errors.badRequest(`${field('to')} is not a list`);
  to.forEach((id, i) => {
    if (!isInt(id)) throw errors.badRequest(`${field('to')}[${i}] is not an integer`);
  });
  const topic = present('topic');
  if (typeof topic !== 'string') throw errors.badRequest(`${field('topic')} is not a string`);
  const rawContent = present('content');
  if (typeof rawContent !== 'string') throw errors.badRequest(`${field('content')} is not a string`);
  // The content parameter is stripped of surrounding whitespace and must not be blank then.
  const content = rawContent.trim();
  if (content === '') throw errors.badRequest(`${field('content')} cannot be blank`);
  const timestamp = input.timestamp;
  if (timestamp !== undefined && timestamp !== null && (typeof timestamp !== 'number' || !Number.isFinite(timestamp))) {
    throw errors.badRequest(`${field('timestamp')} is not a number`);
  }
  const allowed = new Set(['type', 'to', 'topic', 'content', 'timestamp']);
  for (const key of Object.keys(input)) {
    if (!allowed.has(key)) throw errors.badRequest(`Argument "${key}" at ${where} is unexpected`);
  }
  return { type, to: to as number[], topic, content, timestamp: typeof timestamp === 'number' ? timestamp : null };
}

/** Validates one client draft and gives its stored form (without id). */
export function validateDraft(input: DraftInput, where: string, now: number, recipients: RecipientCheck, author: Pick<DraftsState, 'user_id'>): Omit<DraftData, 'id'> {
  const { type, to, topic, content, timestamp } = checkDraftShape(input, where);
  if (timestamp !== null && timestamp < 0) throw errors.badRequest('Timestamp must not be negative.');
  // A draft's content follows a message's rules (the real server normalizes both alike): cut when too long.
  const body = normalizeContent(content);

  // Kept to the microsecond, shown in whole seconds (as the real server stores and shows it).
  const stamp = timestamp !== null ? Math.floor(Math.round(timestamp * 1e6) / 1e6) : now;
  if (type === 'stream') {
    // Only a channel draft's topic matters, so only it is checked.
    if (topic.includes('\u0000')) throw errors.badRequest('Topic must not contain null bytes');
    if (to.length !== 1) throw errors.badRequest('Must specify exactly 1 channel ID for channel messages');
    const channel = to[0] as number;
    if (!recipients.channelOk(channel)) throw errors.badRequest('Invalid channel ID');
    return { type, to: [channel], topic: truncateTopic(topic), content: body, timestamp: stamp };
  }
  // A direct message draft to nobody is addressed to nobody: type "".
  if (type === 'private' && to.length > 0) {
    const ids = [...new Set(to)].sort((a, b) => a - b);
    for (const id of ids) if (!recipients.userOk(id)) throw errors.badRequest(`Invalid user ID ${id}`);
    for (const id of ids) {
      const email = recipients.deactivatedEmail(id);
      if (email !== undefined) throw errors.badRequest(`'${email}' is no longer using Zulip.`);
    }
    // Stored as a conversation: shown as its other participants (the author alone for a note to self).
    const others = ids.filter((id) => id !== author.user_id);
    return { type, to: others.length > 0 ? others : ids, topic: '', content: body, timestamp: stamp };
  }
  // Unaddressed: `to` and `topic` mean nothing.
  return { type: '', to: [], topic: '', content: body, timestamp: stamp };
}

/** Pure: a command on one user's drafts gives the events to record, or a catalog error. */
export function decideDrafts(command: DraftCommand, state: DraftsState): DraftEvent[] {
  const user_id = state.user_id;
  switch (command.type) {
    case 'CreateDrafts': {
      if (!state.sync_enabled) throw draftsDisabled();
      if (command.drafts.length === 0) return [];
      if (command.ids.length !== command.drafts.length) throw new Error('one id per draft');
      const drafts = command.drafts.map((input, i) => ({
        id: command.ids[i]!,
        ...validateDraft(input, `drafts[${i}]`, command.now, command.recipients, state),
      }));
      return [{ type: 'DraftsCreated', data: { user_id, drafts } }];
    }
    case 'EditDraft': {
      if (!state.sync_enabled) throw draftsDisabled();
      checkDraftShape(command.draft, 'draft');
      if (!state.draft_ids.includes(command.draft_id)) throw draftDoesNotExist();
      const draft = { id: command.draft_id, ...validateDraft(command.draft, 'draft', command.now, command.recipients, state) };
      return [{ type: 'DraftUpdated', data: { user_id, draft } }];
    }
    case 'DeleteDraft':
      if (!state.sync_enabled) throw draftsDisabled();
      if (!state.draft_ids.includes(command.draft_id)) throw draftDoesNotExist();
      return [{ type: 'DraftDeleted', data: { user_id, draft_id: command.draft_id, reason: 'user' } }];
    case 'DeleteAllDrafts':
      return state.draft_ids.map((draft_id) => ({ type: 'DraftDeleted', data: { user_id, draft_id, reason: 'sync_disabled' } }));
    default:
      return assertNever(command);
  }
}
