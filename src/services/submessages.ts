import { errors } from '../domain/errors.js';
import type { SubmessageAdded } from '../domain/submessages/events.js';
import { validatePollData, validateTodoData, WidgetError } from '../domain/submessages/widgets.js';
import type { UserRow } from '../read/users.js';
import { metadataOf, type RequestMeta, type ServiceContext } from './context.js';
import { getMessageRow } from '../read/messages.js';
import { messageVisibleTo } from '../read/narrow.js';
import { invalidMessage } from './messages.js';

export const submessagesStream = (messageId: number) => `submessages-${messageId}`;

export interface SubmessageParams {
  message_id: number;
  msg_type: string;
  content: string;
}

const widgetTypeIn = (content: string): string | null => {
  try {
    const parsed = JSON.parse(content) as { widget_type?: unknown };
    return typeof parsed.widget_type === 'string' ? parsed.widget_type : null;
  } catch {
    return null;
  }
};

/** The widget type of a message: its first `widget` submessage's, or null. */
async function widgetTypeOf(ctx: ServiceContext, messageId: number): Promise<string | null> {
  const first = await ctx.db.selectFrom('submessages').select('content').where('message_id', '=', messageId).where('msg_type', '=', 'widget')
    .orderBy('id').limit(1).executeTakeFirst();
  return first ? widgetTypeIn(first.content) : null;
}

/**
 * Whether the message's sender has a submessage on it, and the message's widget type. Usually one
 * query: the first row that is the sender's or a widget, when it is the sender's widget (a poll or
 * a to-do list sent with the message), answers both, since no widget row comes before it.
 */
async function submessageFacts(ctx: ServiceContext, messageId: number, senderId: number): Promise<{ bySender: boolean; widgetType: string | null }> {
  const first = await ctx.db.selectFrom('submessages').select(['sender_id', 'msg_type', 'content']).where('message_id', '=', messageId)
    .where((eb) => eb.or([eb('sender_id', '=', senderId), eb('msg_type', '=', 'widget')]))
    .orderBy('id').limit(1).executeTakeFirst();
  if (!first) return { bySender: false, widgetType: null };
  if (first.sender_id === senderId && first.msg_type === 'widget') return { bySender: true, widgetType: widgetTypeIn(first.content) };
  const bySender = first.sender_id === senderId
    || (await ctx.db.selectFrom('submessages').select('id').where('message_id', '=', messageId).where('sender_id', '=', senderId).limit(1).executeTakeFirst()) !== undefined;
  return { bySender, widgetType: await widgetTypeOf(ctx, messageId) };
}

/**
 * POST /submessage, as the real server: the message must be visible to the user; the first
 * submessage of a message must come from its sender; content must be JSON; polls and to-do lists
 * check their data (only the widget's author edits a poll's question or a list's title).
 */
export async function addSubmessage(ctx: ServiceContext, meta: RequestMeta, user: UserRow, params: SubmessageParams): Promise<void> {
  const message = await getMessageRow(ctx.db, params.message_id);
  if (!message) throw invalidMessage();
  // Votes come in crowds: the visibility check, the message's submessage facts and the new id are
  // independent reads, taken side by side instead of one after another. Nothing read is used
  // unless the message is visible; an id drawn for a refused request is a gap, as sequences allow.
  const [visible, { bySender, widgetType }, submessageId] = await Promise.all([
    messageVisibleTo(ctx.db, { user_id: user.id, role: user.role, realm_id: user.realm_id }, message),
    submessageFacts(ctx, message.id, message.sender_id),
    ctx.commands.nextId('submessage_id_seq'),
  ]);
  if (!visible) throw invalidMessage();
  if (message.sender_id !== user.id && !bySender) throw errors.badRequest('You cannot attach a submessage to this message.');
  let data: unknown;
  try {
    data = JSON.parse(params.content);
  } catch {
    throw errors.badRequest('Invalid json for submessage');
  }
  const isAuthor = message.sender_id === user.id;
  try {
    if (widgetType === 'poll') validatePollData(data, isAuthor);
    if (widgetType === 'todo') validateTodoData(data, isAuthor);
  } catch (error) {
    if (error instanceof WidgetError) throw errors.badRequest(error.message);
    throw error;
  }
  const event: SubmessageAdded = {
    type: 'SubmessageAdded',
    data: { submessage_id: submessageId, message_id: message.id, realm_id: message.realm_id, sender_id: user.id, msg_type: params.msg_type, content: params.content },
  };
  // Submessages only accumulate: no expected version, so concurrent votes never conflict.
  await ctx.commands.run(metadataOf(meta), async () => ({
    appends: [{ streamId: submessagesStream(message.id), expectedVersion: undefined, events: [event] }],
    result: undefined,
  }));
}
