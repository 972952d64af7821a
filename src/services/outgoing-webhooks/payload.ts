import type { WebhookBody } from './http-call.js';

export const Interface = { GENERIC: 1, SLACK: 2 } as const;

/** A message that triggered a bot, with what the request needs besides the message itself. */
export interface Trigger {
  /** the message in the GET /messages format, raw Markdown content and rendered_content both */
  message: Record<string, unknown>;
  trigger: 'mention' | 'direct_message';
  bot: { id: number; email: string; full_name: string };
  token: string;
  realm: { id: number; host: string };
}

/**
 * The request each interface makes (the real server's make_request): Zulip's generic JSON, or
 * Slack's outgoing webhook form, which has no direct messages (null: no request).
 */
export function requestBody(iface: number, t: Trigger): WebhookBody | null {
  const m = t.message;
  if (iface !== Interface.SLACK) {
    return {
      kind: 'json',
      value: { data: m.content, message: m, bot_email: t.bot.email, bot_full_name: t.bot.full_name, token: t.token, trigger: t.trigger },
    };
  }
  if (m.type === 'private') return null;
  return {
    kind: 'form',
    fields: [
      ['token', t.token],
      ['team_id', `T${t.realm.id}`],
      ['team_domain', t.realm.host],
      ['channel_id', `C${String(m.stream_id)}`],
      ['channel_name', String(m.display_recipient)],
      ['thread_ts', Number(m.timestamp)],
      ['timestamp', Number(m.timestamp)],
      ['user_id', `U${String(m.sender_id)}`],
      ['user_name', String(m.sender_full_name)],
      ['text', String(m.content)],
      ['trigger_word', t.trigger],
      ['service_id', t.bot.id],
    ],
  };
}

/** The webhook's answer could not become a message: the text the real server reports it with. */
export class ReplyError extends Error {}

export interface Reply {
  content: string;
  /** JSON text of a widget (the generic interface only) */
  widget_content?: string;
}

/**
 * What a successful (2xx) answer asks the bot to say, by the real server's rules
 * (process_success_response): JSON of an object, or the JSON string "" (nothing, as old bot servers
 * answered); the generic interface reads response_not_required, then response_string (deprecated),
 * then content and widget_content; Slack's reads text. Nothing is said for an empty content.
 */
export function replyFrom(iface: number, body: string): Reply | null {
  let answer: unknown;
  try {
    answer = JSON.parse(body);
  } catch {
    throw new ReplyError('Invalid JSON in response');
  }
  if (answer === '') return null;
  if (typeof answer !== 'object' || answer === null || Array.isArray(answer)) throw new ReplyError('Invalid response format');
  const fields = answer as Record<string, unknown>;
  let reply: Reply | null = null;
  if (iface === Interface.SLACK) {
    if ('text' in fields) reply = { content: pythonStr(fields.text) };
  } else if (pythonTruthy(fields.response_not_required)) {
    return null;
  } else if ('response_string' in fields) {
    reply = { content: pythonStr(fields.response_string) };
  } else if ('content' in fields) {
    reply = { content: pythonStr(fields.content) };
    if ('widget_content' in fields) {
      // The real server reads widget_content as JSON text; anything else is not such text.
      if (typeof fields.widget_content !== 'string') throw new ReplyError('Widgets: API programmer sent invalid JSON content');
      reply.widget_content = fields.widget_content;
    }
  }
  if (reply === null || reply.content.trim() === '') return null;
  return reply;
}

/** str() of a JSON value as the real server applies it to the answer's content. */
function pythonStr(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === null || value === undefined) return 'None';
  if (value === true) return 'True';
  if (value === false) return 'False';
  if (typeof value === 'number') return String(value);
  return JSON.stringify(value);
}

function pythonTruthy(value: unknown): boolean {
  if (value === undefined || value === null || value === false || value === 0 || value === '') return false;
  if (Array.isArray(value)) return value.length > 0;
  if (typeof value === 'object') return Object.keys(value).length > 0;
  return true;
}
