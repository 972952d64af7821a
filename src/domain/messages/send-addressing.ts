import { ApiError, errors } from '../errors.js';

/**
 * How POST /messages reads its addressing parameters, by the real server's rules: `to` is text
 * that may or may not be JSON, and a channel message's topic is checked before anything is
 * looked up.
 */

/** Parses text as JSON, or undefined when it is not JSON. */
function jsonOf(text: string): { value: unknown } | undefined {
  try {
    return { value: JSON.parse(text) };
  } catch {
    return undefined;
  }
}

const isId = (x: unknown): x is number => typeof x === 'number' && Number.isInteger(x);

/** `to` arrives as form text; a JSON request body may carry it decoded. */
export function toText(to: unknown): string {
  return typeof to === 'string' ? to : JSON.stringify(to);
}

/**
 * A channel message's `to`: a name (raw, or JSON-encoded), an id, or a JSON list holding exactly
 * one of them.
 */
export function extractChannelIndicator(to: string): string | number {
  const parsed = jsonOf(to);
  if (!parsed) return to;
  let data = parsed.value;
  if (Array.isArray(data)) {
    if (data.length !== 1) throw errors.badRequest('Expected exactly one channel');
    data = data[0];
  }
  if (typeof data === 'string' || isId(data)) return data;
  throw errors.badRequest('Invalid data type for channel');
}

/**
 * A direct message's `to`: a JSON list of user ids or of emails, a JSON string, or bare text; a
 * string is split at commas. Emails are trimmed, blanks dropped; duplicates go. An empty result
 * is for the caller to refuse ('Message must have recipients').
 */
export function extractDirectRecipients(to: string): string[] | number[] {
  let data: unknown = jsonOf(to)?.value ?? to;
  if (typeof data === 'string') data = data.split(',');
  if (!Array.isArray(data)) throw errors.badRequest('Invalid data type for recipients');
  if (data.length === 0) return [];
  const mixed = () => errors.badRequest('Recipient lists may contain emails or user IDs, but not both.');
  if (typeof data[0] === 'string') {
    if (!data.every((x): x is string => typeof x === 'string')) throw mixed();
    return [...new Set(data.map((x) => x.trim()))].filter((x) => x !== '');
  }
  if (!isId(data[0])) throw errors.badRequest('Invalid data type for recipients');
  if (!data.every(isId)) throw mixed();
  return [...new Set(data)];
}

/** Unicode noncharacters: U+FDD0..U+FDEF and the last two code points of every plane. */
function isNoncharacter(cp: number): boolean {
  return (cp >= 0xfdd0 && cp <= 0xfdef) || (cp & 0xfffe) === 0xfffe;
}

/** Control characters (Cc), lone surrogates (Cs) and noncharacters are not printable. */
function isPrintable(char: string): boolean {
  const cp = char.codePointAt(0)!;
  if (cp <= 0x1f || (cp >= 0x7f && cp <= 0x9f)) return false;
  if (cp >= 0xd800 && cp <= 0xdfff) return false;
  return !isNoncharacter(cp);
}

/**
 * A channel message's topic as sent: trimmed, not empty, every character printable (the position
 * counts code points from 1), then cut to `maxLength` with '...'.
 */
export function checkSendTopic(topic: string, maxLength: number): string {
  const trimmed = topic.trim();
  if (trimmed === '') throw errors.badRequest("Topic can't be empty!");
  const chars = [...trimmed];
  const bad = chars.findIndex((c) => !isPrintable(c));
  if (bad >= 0) throw errors.badRequest(`Invalid character in topic, at position ${bad + 1}!`);
  return chars.length > maxLength ? chars.slice(0, maxLength - 3).join('') + '...' : trimmed;
}

/** The real server names a missing channel with its name HTML-escaped, in the text and the field. */
export function channelNameMissing(name: string): ApiError {
  const escaped = escapeHtml(name);
  return new ApiError('STREAM_DOES_NOT_EXIST', 400, `Channel '${escaped}' does not exist`, { stream: escaped });
}

export function channelIdMissing(id: number): ApiError {
  return new ApiError('STREAM_DOES_NOT_EXIST', 400, `Channel with ID '${id}' does not exist`, { stream_id: id });
}

function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#x27;');
}
