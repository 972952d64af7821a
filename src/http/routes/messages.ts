import type { FastifyInstance } from 'fastify';
import { defineRoute } from '../route.js';
import { errors } from '../../domain/errors.js';
import { MAX_MESSAGE_LENGTH } from '../../domain/messages/decider.js';
import { renderMarkdownAsync } from '../../markdown/index.js';
import {
  fetchMessages,
  formatMessages,
  getMessageRow,
  getMessageRows,
  highlight,
  idsMatchingNarrow,
  narrowViewer,
  LARGER_THAN_MAX_MESSAGE_ID,
  type FetchParams,
  type MessageRow,
} from '../../read/messages.js';
import {
  deleteMessage,
  deleteTopic,
  editMessage,
  messageHistory,
  react,
  requireVisibleMessage,
  sendMessage,
} from '../../services/messages.js';
import { changeFlags, changeFlagsForNarrow, markAllAsRead, markConversationAsRead } from '../../services/message-flags.js';
import { realmRenderData, senderRenderContext } from '../../services/render-context.js';
import { withTopicLinkTargets } from '../../services/topic-link-targets.js';
import { cachedUserRows } from '../../read/user-rows-cache.js';
import { CHANNEL_LOOKUP_TABLES, messageAccessibleTo, narrowForSpectator, parseNarrow } from '../../read/narrow.js';
import type { RealmRow } from '../../read/realm.js';
import type { Viewer } from '../../visibility.js';
import type { AppServices } from '../services.js';

const anyJson = { anyOf: [{ type: 'string' }, { type: 'integer' }, { type: 'array' }] } as const;

interface WindowQuery {
  anchor?: string | number;
  include_anchor?: boolean;
  num_before?: number;
  num_after?: number;
  narrow?: unknown;
  use_first_unread_anchor?: boolean;
}

/** The anchor as the real server reads it: a keyword, or an integer held between 0 and newest. */
function anchorOf(raw: string | number): FetchParams['anchor'] {
  if (raw === 'newest' || raw === 'oldest' || raw === 'first_unread') return raw;
  const text = typeof raw === 'number' ? (Number.isInteger(raw) ? BigInt(raw).toString() : '') : raw.trim();
  if (!/^[+-]?\d+$/.test(text)) throw errors.badRequest('Invalid anchor');
  const value = BigInt(text);
  if (value < 0n) return 0;
  return value > BigInt(LARGER_THAN_MAX_MESSAGE_ID) ? LARGER_THAN_MAX_MESSAGE_ID : Number(value);
}

function windowOf(params: WindowQuery): FetchParams {
  let anchor: FetchParams['anchor'];
  // The deprecated use_first_unread_anchor wins over any anchor, as on the real server (older clients
  // send it beside anchor=0).
  if (params.use_first_unread_anchor) anchor = 'first_unread';
  else if (params.anchor === undefined || params.anchor === '') throw errors.missingArgument('anchor');
  else anchor = anchorOf(params.anchor);
  if (params.num_before === undefined) throw errors.missingArgument('num_before');
  if (params.num_after === undefined) throw errors.missingArgument('num_after');
  for (const name of ['num_before', 'num_after'] as const) if (params[name]! < 0) throw errors.badRequest(`${name} is too small`);
  // The narrow is a parameter: the real server has checked its form before the view looks at the window.
  const narrow = narrowOf(params.narrow);
  parseNarrow(narrow);
  const includeAnchor = params.include_anchor ?? true;
  // Leaving the anchor out of a window that reaches both sides of it would leave a gap.
  if (params.num_before > 0 && params.num_after > 0 && !includeAnchor) throw errors.badRequest('The anchor can only be excluded at an end of the range');
  return { anchor, includeAnchor, numBefore: params.num_before, numAfter: params.num_after, narrow };
}

const windowParams = {
  anchor: { anyOf: [{ type: 'string' }, { type: 'integer' }] },
  include_anchor: { type: 'boolean' },
  num_before: { type: 'integer' },
  num_after: { type: 'integer' },
  narrow: { anyOf: [{ type: 'array' }, { type: 'string' }] },
  use_first_unread_anchor: { type: 'boolean' },
} as const;

/** The narrow arrives JSON-encoded: text that is not JSON is refused as the real server words it. */
function narrowOf(raw: unknown): unknown {
  if (raw === undefined || typeof raw !== 'string') return raw ?? [];
  try {
    return JSON.parse(raw);
  } catch {
    throw errors.badRequest('narrow is not valid JSON');
  }
}

export default async function messageRoutes(app: FastifyInstance, { services }: { services: AppServices }) {
  const { ctx } = services;

  defineRoute<{ type: string; to?: unknown; topic?: string; subject?: string; content: string; queue_id?: string; local_id?: string; read_by_sender?: boolean; widget_content?: string; forged?: string }>(app, {
    method: 'POST',
    url: '/messages',
    params: {
      properties: {
        type: { type: 'string', enum: ['private', 'direct', 'stream', 'channel'] },
        // Kept as sent: whether it is JSON decides how it is read (see send-addressing.ts).
        to: {},
        // A NUL is refused by the send rules: 'Invalid character in topic, at position N!' and
        // 'Message must not contain null bytes'.
        topic: { type: 'string', 'x-nul-checked': true },
        subject: { type: 'string', 'x-nul-checked': true },
        content: { type: 'string', 'x-nul-checked': true },
        // Both are stored with the message (MessageSent) to echo it back to the sending queue.
        queue_id: { type: 'string', maxLength: 64 },
        local_id: { type: 'string', maxLength: 64 },
        read_by_sender: { type: 'boolean' },
        widget_content: { type: 'string' },
        // Mirroring bots forge senders; nobody here may.
        forged: { type: 'string' },
      },
      required: ['type', 'content'],
    },
    handler: async ({ params, user, realm, meta }) => {
      if (params.forged === 'true' || params.forged === 'yes') throw errors.badRequest('User not authorized for this query');
      return sendMessage(ctx, meta, user, realm, { ...params, topic: params.topic ?? params.subject });
    },
  });

  type FetchQuery = WindowQuery & { apply_markdown?: boolean; client_gravatar?: boolean; client_avatarhost?: boolean };

  /** GET /messages's answer for `viewer`: the window, formatted, with search highlights. */
  async function messageWindow(viewer: Viewer, realm: RealmRow, window: FetchParams, params: FetchQuery, clientGravatar: boolean) {
    const data = await realmRenderData(ctx, realm.id);
    const applyMarkdown = params.apply_markdown ?? true;
    // The read watermark comes with the window's extras (an unread narrow reads it first).
    const found = await fetchMessages(ctx.db, viewer, realm, window, [applyMarkdown ? 'rendered_content' : 'content'], ctx.tablesVersion(CHANNEL_LOOKUP_TABLES));
    const messages = await formatMessages(ctx.db, viewer, found.rows, {
      applyMarkdown,
      clientGravatar,
      realm,
      linkifiers: data.context.linkifiers,
      userRows: (ids) => cachedUserRows(ctx.db, (tables) => ctx.tablesVersion(tables), ids),
    });
    if (found.searchTerms.length > 0) {
      for (const [i, m] of messages.entries()) {
        const row = found.rows[i]!;
        m.match_content = highlight(row.rendered_content ?? '', found.searchTerms);
        m.match_subject = highlight(row.topic, found.searchTerms, true);
      }
    }
    return {
      messages,
      anchor: found.anchor,
      found_anchor: found.foundAnchor,
      found_oldest: found.foundOldest,
      found_newest: found.foundNewest,
      history_limited: false,
    };
  }

  function checkedWindow(params: FetchQuery): FetchParams {
    const window = windowOf(params);
    if (window.numBefore + window.numAfter > 5000) throw errors.badRequest('Too many messages requested (maximum 5000).');
    return window;
  }

  defineRoute<FetchQuery>(app, {
    method: 'GET',
    url: '/messages',
    params: {
      properties: {
        ...windowParams,
        apply_markdown: { type: 'boolean' },
        client_gravatar: { type: 'boolean' },
        client_avatarhost: { type: 'boolean' },
      },
    },
    handler: async ({ params, user, realm }) => {
      const window = checkedWindow(params);
      const viewer = { user_id: user.id, role: user.role, realm_id: user.realm_id };
      return messageWindow(viewer, realm, window, params, params.client_avatarhost ?? params.client_gravatar ?? true);
    },
    // The narrow must say it reads web-public channels (get_messages_backend for a spectator), and
    // client_gravatar is off for spectators whatever was asked.
    spectator: async ({ params, realm, viewer }) => {
      const window = checkedWindow(params);
      return messageWindow(viewer, realm, { ...window, narrow: narrowForSpectator(parseNarrow(window.narrow)) }, params, false);
    },
  });

  defineRoute<{ msg_ids: number[]; narrow: unknown }>(app, {
    method: 'GET',
    url: '/messages/matches_narrow',
    params: {
      properties: { msg_ids: { type: 'array', items: { type: 'integer' } }, narrow: { anyOf: [{ type: 'array' }, { type: 'string' }] } },
      required: ['msg_ids', 'narrow'],
    },
    handler: async ({ params, user, realm }) => {
      const viewer = await narrowViewer(ctx.db, user);
      const matched = await idsMatchingNarrow(ctx.db, viewer, realm, narrowOf(params.narrow), params.msg_ids);
      const rows = await getMessageRows(ctx.db, matched.ids);
      const messages: Record<string, unknown> = {};
      for (const row of rows) {
        messages[String(row.id)] = {
          match_content: highlight(row.rendered_content, matched.searchTerms),
          match_subject: highlight(row.topic, matched.searchTerms, true),
        };
      }
      return { messages };
    },
  });

  defineRoute<{ content: string }>(app, {
    method: 'POST',
    url: '/messages/render',
    params: { properties: { content: { type: 'string' } }, required: ['content'] },
    handler: async ({ params, user, realm }) => {
      if ([...params.content].length > MAX_MESSAGE_LENGTH) throw errors.badRequest(`Message too long (limit: ${MAX_MESSAGE_LENGTH} characters)`);
      const data = await realmRenderData(ctx, realm.id);
      const context = await withTopicLinkTargets(ctx.db, senderRenderContext(data.context, user), user, params.content);
      return { rendered: (await renderMarkdownAsync(params.content, context)).html };
    },
  });

  defineRoute<{ messages: number[]; op: string; flag: string }>(app, {
    method: 'POST',
    url: '/messages/flags',
    params: {
      properties: { messages: { type: 'array', items: { type: 'integer' } }, op: { type: 'string' }, flag: { type: 'string' } },
      required: ['messages', 'op', 'flag'],
    },
    handler: async ({ params, user, meta }) => {
      await changeFlags(ctx, meta, user, params.op, params.flag, params.messages);
      // The real server answers with the ids as asked (kept for older clients), whatever changed.
      return { messages: params.messages };
    },
  });

  defineRoute<WindowQuery & { op: string; flag: string }>(app, {
    method: 'POST',
    url: '/messages/flags/narrow',
    params: {
      properties: { ...windowParams, op: { type: 'string' }, flag: { type: 'string' } },
      required: ['anchor', 'num_before', 'num_after', 'narrow', 'op', 'flag'],
    },
    handler: async ({ params, user, realm, meta }) => {
      const window = windowOf(params);
      return changeFlagsForNarrow(ctx, meta, user, realm, params.op, params.flag, window);
    },
  });

  type SingleQuery = { message_id: number; apply_markdown?: boolean; client_gravatar?: boolean; client_avatarhost?: boolean };

  async function singleMessage(viewer: Viewer, realm: RealmRow, row: MessageRow, params: SingleQuery) {
    const data = await realmRenderData(ctx, realm.id);
    const [message] = await formatMessages(ctx.db, viewer, [row], {
      applyMarkdown: params.apply_markdown ?? true,
      clientGravatar: params.client_avatarhost ?? params.client_gravatar ?? true,
      realm,
      linkifiers: data.context.linkifiers,
      userRows: (ids) => cachedUserRows(ctx.db, (tables) => ctx.tablesVersion(tables), ids),
    });
    return { raw_content: row.content, message };
  }

  defineRoute<SingleQuery>(app, {
    method: 'GET',
    url: '/messages/:message_id',
    params: {
      properties: {
        message_id: { type: 'integer' },
        apply_markdown: { type: 'boolean' },
        client_gravatar: { type: 'boolean' },
        client_avatarhost: { type: 'boolean' },
      },
      required: ['message_id'],
    },
    handler: async ({ params, user, realm }) => {
      const row = await requireVisibleMessage(ctx.db, user, params.message_id);
      return singleMessage({ user_id: user.id, role: user.role, realm_id: user.realm_id }, realm, row, params);
    },
    // access_web_public_message: anything but a message of a web-public channel is the 401, so that a
    // spectator learns nothing about whether the message exists.
    spectator: async ({ params, realm, viewer }) => {
      const row = await getMessageRow(ctx.db, params.message_id);
      if (!row || !(await messageAccessibleTo(ctx.db, viewer, row))) throw errors.notLoggedInSession();
      return singleMessage(viewer, realm, row, params);
    },
  });

  defineRoute<{ message_id: number; content?: string; topic?: string; subject?: string; stream_id?: number; propagate_mode?: 'change_one' | 'change_later' | 'change_all'; send_notification_to_old_thread?: boolean; send_notification_to_new_thread?: boolean }>(app, {
    method: 'PATCH',
    url: '/messages/:message_id',
    params: {
      properties: {
        message_id: { type: 'integer' },
        content: { type: 'string' },
        topic: { type: 'string' },
        subject: { type: 'string' },
        stream_id: { type: 'integer' },
        propagate_mode: { type: 'string', enum: ['change_one', 'change_later', 'change_all'] },
        send_notification_to_old_thread: { type: 'boolean' },
        send_notification_to_new_thread: { type: 'boolean' },
      },
      required: ['message_id'],
    },
    handler: async ({ params, user, realm, meta }) => {
      await editMessage(ctx, meta, user, realm, params.message_id, {
        content: params.content,
        topic: params.topic ?? params.subject,
        stream_id: params.stream_id,
        propagate_mode: params.propagate_mode,
        send_notification_to_old_thread: params.send_notification_to_old_thread,
        send_notification_to_new_thread: params.send_notification_to_new_thread,
      });
      // detached_uploads joins this response at feature level 285, above ours.
    },
  });

  defineRoute<{ message_id: number; purge?: boolean }>(app, {
    method: 'DELETE',
    url: '/messages/:message_id',
    // purge (an extension, administrators only): shred the content now instead of after the grace period.
    params: { properties: { message_id: { type: 'integer' }, purge: { type: 'boolean' } }, required: ['message_id'] },
    handler: async ({ params, user, realm, meta }) => {
      await deleteMessage(ctx, meta, user, realm, params.message_id, { purge: params.purge });
    },
  });

  defineRoute<{ message_id: number }>(app, {
    method: 'GET',
    url: '/messages/:message_id/history',
    params: { properties: { message_id: { type: 'integer' } }, required: ['message_id'] },
    handler: async ({ params, user, realm }) => ({ message_history: await messageHistory(ctx.db, user, realm, params.message_id) }),
  });

  const reactionParams = {
    message_id: { type: 'integer' },
    emoji_name: { type: 'string' },
    emoji_code: { type: 'string' },
    reaction_type: { type: 'string' },
  } as const;
  defineRoute<{ message_id: number; emoji_name: string; emoji_code?: string; reaction_type?: string }>(app, {
    method: 'POST',
    url: '/messages/:message_id/reactions',
    params: { properties: reactionParams, required: ['message_id', 'emoji_name'] },
    handler: async ({ params, user, realm, meta }) => {
      await react(ctx, meta, user, realm, params.message_id, 'add', params);
    },
  });
  defineRoute<{ message_id: number; emoji_name?: string; emoji_code?: string; reaction_type?: string }>(app, {
    method: 'DELETE',
    url: '/messages/:message_id/reactions',
    params: { properties: reactionParams, required: ['message_id'] },
    handler: async ({ params, user, realm, meta }) => {
      await react(ctx, meta, user, realm, params.message_id, 'remove', params);
    },
  });

  defineRoute(app, {
    method: 'POST',
    url: '/mark_all_as_read',
    handler: async ({ user, realm, meta }) => {
      await markAllAsRead(ctx, meta, user, realm);
      return { complete: true };
    },
  });

  defineRoute<{ stream_id: number }>(app, {
    method: 'POST',
    url: '/mark_stream_as_read',
    params: { properties: { stream_id: { type: 'integer' } }, required: ['stream_id'] },
    handler: async ({ params, user, realm, meta }) => {
      await markConversationAsRead(ctx, meta, user, realm, params.stream_id);
    },
  });

  defineRoute<{ stream_id: number; topic_name: string }>(app, {
    method: 'POST',
    url: '/mark_topic_as_read',
    params: { properties: { stream_id: { type: 'integer' }, topic_name: { type: 'string' } }, required: ['stream_id', 'topic_name'] },
    handler: async ({ params, user, realm, meta }) => {
      await markConversationAsRead(ctx, meta, user, realm, params.stream_id, params.topic_name);
    },
  });

  defineRoute<{ stream_id: number; topic_name: string }>(app, {
    method: 'POST',
    url: '/streams/:stream_id/delete_topic',
    params: { properties: { stream_id: { type: 'integer' }, topic_name: { type: 'string' } }, required: ['stream_id', 'topic_name'] },
    handler: async ({ params, user, realm, meta }) => deleteTopic(ctx, meta, user, realm, params.stream_id, params.topic_name),
  });

}
