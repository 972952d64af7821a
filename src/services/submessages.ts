import { errors } from '../domain/errors.js';
import type { SubmessageAdded } from '../domain/submessages/events.js';
import { validatePollData, validateTodoData, WidgetError } from '../domain/submessages/widgets.js';
import type { UserRow } from '../read/users.js';
import { metadataOf, type RequestMeta, type ServiceContext } from './context.js';
import { requireVisibleMessage } from './messages.js';

export const submessagesStream = (messageId: number) => `submessages-${messageId}`;

export interface SubmessageParams {
  message_id: number;
  msg_type: string;
  content: string;
}

/** The widget type of a message: its first `widget` submessage's, or null. */
async function widgetTypeOf(ctx: ServiceContext, messageId: number): Promise<string | null> {
  const first = await ctx.db.selectFrom('submessages').select('content').where('message_id', '=', messageId).where('msg_type', '=', 'widget')
    .orderBy('id').limit(1).executeTakeFirst();
  if (!first) return null;
  try {
    const parsed = JSON.parse(first.content) as { widget_type?: unknown };
    return typeof parsed.widget_type === 'string' ? parsed.widget_type : null;
  } catch {
    return null;
  }
}

/**
 * POST /submessage, as the real server: the message must be visible to the user; the first
 * submessage of a message must come from its sender; content must be JSON; polls and to-do lists
 * check their data (only the widget's author edits a poll's question or a list's title).
 */
export async function addSubmessage(ctx: ServiceContext, meta: RequestMeta, user: UserRow, params: SubmessageParams): Promise<void> {
  const message = await requireVisibleMessage(ctx.db, user, params.message_id);
  if (message.sender_id !== user.id) {
    const bySender = await ctx.db.selectFrom('submessages').select('id').where('message_id', '=', message.id).where('sender_id', '=', message.sender_id)
      .limit(1).executeTakeFirst();
    if (!bySender) throw errors.badRequest('You cannot attach a submessage to this message.');
  }
  let data: unknown;
  try {
    data = JSON.parse(params.content);
  } catch {
    throw errors.badRequest('Invalid json for submessage');
  }
  const widgetType = await widgetTypeOf(ctx, message.id);
  const isAuthor = message.sender_id === user.id;
  try {
    if (widgetType === 'poll') validatePollData(data, isAuthor);
    if (widgetType === 'todo') validateTodoData(data, isAuthor);
  } catch (error) {
    if (error instanceof WidgetError) throw errors.badRequest(error.message);
    throw error;
  }
  const submessageId = await ctx.commands.nextId('submessage_id_seq');
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
