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
}

export type DraftCommand =
  | { type: 'CreateDrafts'; drafts: readonly DraftInput[]; ids: readonly number[]; now: number; recipients: RecipientCheck }
  | { type: 'EditDraft'; draft_id: number; draft: DraftInput; now: number; recipients: RecipientCheck }
  | { type: 'DeleteDraft'; draft_id: number }
  | { type: 'DeleteAllDrafts' };

export const draftDoesNotExist = () => new ApiError('BAD_REQUEST', 404, 'Draft does not exist');
export const draftsDisabled = () => errors.badRequest('User has disabled synchronizing drafts.');

const isInt = (x: unknown): x is number => typeof x === 'number' && Number.isInteger(x);

/** Validates one client draft and gives its stored form (without id). */
export function validateDraft(input: DraftInput, where: string, now: number, recipients: RecipientCheck): Omit<DraftData, 'id'> {
  if (!input || typeof input !== 'object' || Array.isArray(input)) throw errors.badRequest(`${where} is not a dict`);
  if ('id' in input) throw errors.badRequest(`${where} must not contain an id`);
  for (const key of ['type', 'to', 'topic', 'content'] as const) {
    if (!(key in input)) throw errors.badRequest(`${where}["${key}"] key is missing`);
  }
  const allowed = new Set(['type', 'to', 'topic', 'content', 'timestamp']);
  for (const key of Object.keys(input)) {
    if (!allowed.has(key)) throw errors.badRequest(`${where} has an unexpected key: ${key}`);
  }
  const { type, to, topic, content, timestamp } = input;
  if (type !== '' && type !== 'stream' && type !== 'private') throw errors.badRequest(`Invalid ${where}["type"]`);
  if (!Array.isArray(to) || !to.every(isInt)) throw errors.badRequest(`${where}["to"] is not a list of integers`);
  if (typeof topic !== 'string') throw errors.badRequest(`${where}["topic"] is not a string`);
  if (typeof content !== 'string') throw errors.badRequest(`${where}["content"] is not a string`);
  if (timestamp !== undefined && timestamp !== null) {
    if (typeof timestamp !== 'number' || !Number.isFinite(timestamp)) throw errors.badRequest(`${where}["timestamp"] is not a number`);
    if (timestamp < 0) throw errors.badRequest('Timestamp must not be negative.');
  }
  if (topic.includes('\u0000')) throw errors.badRequest('Topic must not contain null bytes');
  // A draft's content follows a message's rules (the real server normalizes both alike): cut when too long.
  const body = normalizeContent(content);

  const stamp = typeof timestamp === 'number' ? Math.floor(timestamp) : now;
  if (type === 'stream') {
    if (to.length !== 1) throw errors.badRequest('Must specify exactly 1 channel ID for channel messages');
    if (!recipients.channelOk(to[0]!)) throw errors.badRequest('Invalid channel ID');
    return { type, to: [to[0]!], topic: truncateTopic(topic), content: body, timestamp: stamp };
  }
  // A direct message draft to nobody is addressed to nobody: type "".
  if (type === 'private' && to.length > 0) {
    const ids = [...new Set(to)].sort((a, b) => a - b);
    for (const id of ids) if (!recipients.userOk(id)) throw errors.badRequest(`Invalid user ID ${id}`);
    return { type, to: ids, topic: '', content: body, timestamp: stamp };
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
        ...validateDraft(input, `drafts[${i}]`, command.now, command.recipients),
      }));
      return [{ type: 'DraftsCreated', data: { user_id, drafts } }];
    }
    case 'EditDraft': {
      if (!state.sync_enabled) throw draftsDisabled();
      if (!state.draft_ids.includes(command.draft_id)) throw draftDoesNotExist();
      const draft = { id: command.draft_id, ...validateDraft(command.draft, 'draft', command.now, command.recipients) };
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
