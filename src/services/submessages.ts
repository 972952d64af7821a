import { sql } from 'kysely';
import { errors } from '../domain/errors.js';
import type { SubmessageAdded } from '../domain/submessages/events.js';
import { validatePollData, validateTodoData, WidgetError } from '../domain/submessages/widgets.js';
import type { UserRow } from '../read/users.js';
import { metadataOf, type RequestMeta, type ServiceContext } from './context.js';
import { preparedTemplate } from '../db/prepared.js';
import type { Db } from '../db/database.js';
import { MESSAGE_COLUMNS } from '../read/messages.js';
import { messageAccessSql, messageAccessibleWith } from '../read/narrow.js';
import { invalidMessage } from './messages.js';
import { SharedLookups } from './shared-lookups.js';

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

/** By message; one item per vote: its viewer. */
const shared = new SharedLookups<number, number, SubmessageContext | undefined>();

/**
 * The message, whether the viewer may see it, its submessage facts and a new submessage id, in one
 * statement: votes come in crowds, and each statement a vote makes costs the database (and the
 * crowd queued behind it) a round trip. Like sends to a channel (findChannelForSending), the first
 * look-up of a message goes at once, and the votes on it that arrive while it is out share the
 * next one. Nothing read is used unless the message is visible; an id drawn for a refused request
 * is a gap, as sequences allow.
 */
function submessageContext(db: Db, viewerId: number, messageId: number): Promise<SubmessageContext | undefined> {
  if (!Number.isInteger(messageId) || messageId <= 0 || messageId > 2_147_483_647) return Promise.resolve(undefined);
  return shared.get(db, messageId, viewerId, async (viewerIds) => {
    const { rows } = await submessageContextQuery(db, viewerIds, messageId);
    // Ids in the order the requests came, whatever order the rows drew them in.
    const ids = rows.map((row) => Number(row.submessage_id)).sort((a, b) => a - b);
    return viewerIds.map((_, i) => rows[i] && { ...rows[i]!, submessage_id: ids[i]! });
  });
}

// Prepared: planning this statement's subqueries cost about as much as running them (a look-up by
// key, for each viewer of one message: no join a generic plan could get wrong as tables grow).
const submessageContextQuery = preparedTemplate((db: Db, viewerIds: number[], messageId: number) => db
  .selectFrom('messages as m')
  .crossJoin(sql<{ viewer_id: number; ord: number }>`(SELECT * FROM unnest(${viewerIds}::int[]) WITH ORDINALITY AS u(viewer_id, ord))`.as('v'))
  .select(MESSAGE_COLUMNS).select([
    messageAccessSql(sql.ref<number>('v.viewer_id')).as('access'),
    sql<boolean>`EXISTS (SELECT 1 FROM submessages s WHERE s.message_id = m.id AND s.sender_id = m.sender_id)`.as('sender_has_submessage'),
    sql<string | null>`(SELECT s.content FROM submessages s WHERE s.message_id = m.id AND s.msg_type = 'widget' ORDER BY s.id LIMIT 1)`.as('widget_content'),
    sql<string | number>`nextval('submessage_id_seq')`.as('submessage_id'),
  ])
  .where('m.id', '=', messageId)
  .orderBy('v.ord'));

type SubmessageContext = Awaited<ReturnType<typeof submessageContextQuery>>['rows'][number];

/**
 * POST /submessage, as the real server: the message must be visible to the user; the first
 * submessage of a message must come from its sender; content must be JSON; polls and to-do lists
 * check their data (only the widget's author edits a poll's question or a list's title).
 */
export async function addSubmessage(ctx: ServiceContext, meta: RequestMeta, user: UserRow, params: SubmessageParams): Promise<void> {
  const message = await submessageContext(ctx.db, user.id, params.message_id);
  if (!message || !messageAccessibleWith({ user_id: user.id, role: user.role, realm_id: user.realm_id }, message, message.access)) throw invalidMessage();
  if (message.sender_id !== user.id && !message.sender_has_submessage) throw errors.badRequest('You cannot attach a submessage to this message.');
  let data: unknown;
  try {
    data = JSON.parse(params.content);
  } catch {
    throw errors.badRequest('Invalid json for submessage');
  }
  const isAuthor = message.sender_id === user.id;
  const widgetType = message.widget_content === null ? null : widgetTypeIn(message.widget_content);
  try {
    if (widgetType === 'poll') validatePollData(data, isAuthor);
    if (widgetType === 'todo') validateTodoData(data, isAuthor);
  } catch (error) {
    if (error instanceof WidgetError) throw errors.badRequest(error.message);
    throw error;
  }
  const event: SubmessageAdded = {
    type: 'SubmessageAdded',
    data: { submessage_id: Number(message.submessage_id), message_id: message.id, realm_id: message.realm_id, sender_id: user.id, msg_type: params.msg_type, content: params.content },
  };
  // Submessages only accumulate: no expected version, so concurrent votes never conflict.
  await ctx.commands.run(metadataOf(meta), async () => ({
    appends: [{ streamId: submessagesStream(message.id), expectedVersion: undefined, events: [event] }],
    result: undefined,
  }));
}
