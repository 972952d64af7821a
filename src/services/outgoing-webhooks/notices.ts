import { channelNarrowUrl, encodeHashComponent } from '../../markdown/urls.js';

/** The message a trigger came from, as much of it as a link to it needs. */
export interface LinkedMessage {
  id: number;
  /** null for a direct message */
  stream: { id: number; name: string } | null;
  topic: string;
  /** a direct message's participants, sender included */
  dmUserIds: readonly number[];
}

/** The real server's link to a message (message_link_url): its channel and topic, or its conversation's users. */
export function messageLinkUrl(realmUrl: string, message: LinkedMessage): string {
  if (message.stream) return `${realmUrl}${channelNarrowUrl(message.stream)}/topic/${encodeHashComponent(message.topic)}/near/${message.id}`;
  const ids = [...message.dmUserIds].sort((a, b) => a - b);
  return `${realmUrl}/#narrow/dm/${ids.join(',')}${ids.length >= 3 ? '-group' : ''}/near/${message.id}`;
}

/** What the bot posts where it was triggered when the call failed ("Failure! ..."). */
export const conversationFailure = (failure: string) => `Failure! ${failure}`;

export const failures = {
  unavailable: 'Bot is unavailable',
  status: (status: number) => `Third party responded with ${status}`,
  exception: (type: string, command: string) => `An exception of type *${type}* occurred for message \`${command}\`! See the Zulip server logs for more information.`,
  slackDirect: "Slack outgoing webhooks don't support direct messages.",
  timedOut: (seconds: number) => `Request timed out after ${seconds} seconds.`,
  connection: 'A connection error occurred. Is my bot server down?',
  replyRefused: (error: string) => `The outgoing webhook server attempted to send a message in Zulip, but that request resulted in the following error:\n> ${error}`,
};

export interface OwnerNotice {
  messageUrl: string;
  botName: string;
  exception?: { type: string; message: string };
  failureMessage?: string;
  status?: number;
  /** the response's body: bytes for a failed status, text for a reply that could not be sent (quoted as Python quotes each) */
  responseContent?: Buffer | string;
}

/** The bot's direct message to its owner about a failed trigger, in the real server's words (notify_bot_owner). */
export function ownerNoticeContent(notice: OwnerNotice): string {
  let content = `[A message](${notice.messageUrl}) to your bot @_**${notice.botName}** triggered an outgoing webhook.`;
  if (notice.exception) {
    content += `\nWhen trying to send a request to the webhook service, an exception of type ${notice.exception.type} occurred:\n\`\`\`\n${notice.exception.message}\n\`\`\``;
  } else if (notice.failureMessage) {
    content += `\n${notice.failureMessage}`;
  } else if (notice.status === 407) {
    content += '\nThe URL configured for the webhook is for a private or disallowed network.';
  } else if (notice.status) {
    content += `\nThe webhook got a response with status code *${notice.status}*.`;
  }
  if (notice.responseContent !== undefined && notice.responseContent.length > 0) {
    content += `\nThe response contains the following payload:\n\`\`\`\n${pythonRepr(notice.responseContent)}\n\`\`\``;
  }
  return content;
}

const SIMPLE_ESCAPES: Record<number, string> = { 0x5c: '\\\\', 0x0a: '\\n', 0x0d: '\\r', 0x09: '\\t' };

/**
 * Python's repr() of a str or of bytes, which the real server's notice shows: quoted with ' unless
 * the text holds ' and no ", with \\ \n \r \t and the quote escaped, other control characters as
 * \xNN (bytes beyond ASCII too; printable text beyond ASCII stays as it is).
 */
export function pythonRepr(value: Buffer | string): string {
  const isBytes = Buffer.isBuffer(value);
  const text = isBytes ? value.toString('latin1') : value;
  const quote = text.includes("'") && !text.includes('"') ? '"' : "'";
  let out = '';
  for (const char of text) {
    const code = char.codePointAt(0)!;
    if (SIMPLE_ESCAPES[code]) out += SIMPLE_ESCAPES[code];
    else if (char === quote) out += `\\${quote}`;
    else if (code < 0x20 || code === 0x7f || (isBytes && code > 0x7f) || (!isBytes && code >= 0x80 && code < 0xa0)) out += `\\x${code.toString(16).padStart(2, '0')}`;
    else out += char;
  }
  return `${isBytes ? 'b' : ''}${quote}${out}${quote}`;
}
