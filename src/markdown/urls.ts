// Which link targets a message may carry, and how Zulip spells narrow URLs.
import { decodeNamedCharacterReference } from 'decode-named-character-reference';
import { decodeNumericCharacterReference } from 'micromark-util-decode-numeric-character-reference';

const allowedSchemes = new Set(['http', 'https', 'ftp', 'mailto', 'tel', 'sms', 'bitcoin']);

/**
 * The href to use for a link target, or undefined when the target is not allowed (the Markdown then stays
 * literal text). Browsers ignore control characters and whitespace inside a scheme ("java\tscript:"), so the
 * scheme is judged with them removed.
 */
export function safeHref(target: string, realmUrl: string): string | undefined {
  const url = target.trim();
  if (url === '') return undefined;
  if (/[\u0000-\u001f\u007f-\u009f]/.test(url)) return undefined;
  const probe = url.replace(/[\s\u0000-\u0020]/g, '');
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(probe)?.[1]?.toLowerCase();
  // "example.com:8080/x" has a port, not a scheme.
  const isPort = scheme !== undefined && /^\d+(?:[/?#]|$)/.test(probe.slice(scheme.length + 1));
  if (scheme !== undefined && !isPort) {
    if (!allowedSchemes.has(scheme)) return undefined;
    return relativeToRealm(url, realmUrl);
  }
  if (url.startsWith('#') || url.startsWith('/')) return url;
  if (/^[^/]+@[^/]+\.[^/]+$/.test(url)) return `mailto:${url}`;
  return `http://${url}`;
}

const characterReference = /&(?:#([0-9]{1,7})|#[xX]([0-9a-fA-F]{1,6})|([A-Za-z][A-Za-z0-9]{0,31}));/g;

/**
 * A link target with its character references decoded ("a&amp;b" is "a&b"), as a browser reads the target the
 * real server writes them into; an unknown name stays as written.
 */
export function decodeCharacterReferences(target: string): string {
  if (!target.includes('&')) return target;
  return target.replace(characterReference, (reference, decimal?: string, hex?: string, name?: string) => {
    if (decimal !== undefined) return decodeNumericCharacterReference(decimal, 10);
    if (hex !== undefined) return decodeNumericCharacterReference(hex, 16);
    return decodeNamedCharacterReference(name ?? '') || reference;
  });
}

/** Links to the realm's own web app views and uploaded files become relative ("#narrow/…", "user_uploads/…"). */
function relativeToRealm(url: string, realmUrl: string): string {
  const prefix = `${realmUrl}/`;
  if (!url.startsWith(prefix)) return url;
  const rest = url.slice(prefix.length);
  return rest.startsWith('#') || rest.startsWith('user_uploads/') ? rest : url;
}

/** Zulip's URL-fragment encoding: percent-encode everything but `-_.~*`, letters and digits, then `%` → `.`. */
export function encodeHashComponent(value: string): string {
  return encodeURIComponent(value)
    .replace(/[!'().]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
    .replace(/%/g, '.');
}

/** A channel's narrow URL: its id, then its name with spaces written as `-` ("9-Zulip-updates.2E"). */
export function channelNarrowUrl(channel: { id: number; name: string }): string {
  return `/#narrow/channel/${channel.id}-${encodeHashComponent(channel.name.replaceAll(' ', '-'))}`;
}

/** The path of an uploaded file (e.g. "/user_uploads/2/ab/xyz/file.png") the href points to, if any. */
export function uploadPath(href: string, realmUrl: string): string | undefined {
  let path = href;
  if (path.startsWith(realmUrl + '/')) path = path.slice(realmUrl.length);
  else if (path.startsWith('user_uploads/')) path = `/${path}`;
  const match = /^\/user_uploads\/(?!thumbnail\/)[^?#\s]+/.exec(path);
  return match?.[0];
}

const imageExtensions = /\.(?:bmp|gif|jpe?g|png|webp)$/i;
const videoExtensions = /\.(?:mp4|webm|mov)$/i;

function pathOf(href: string): string {
  try {
    return new URL(href, 'http://realm.invalid').pathname;
  } catch {
    return href;
  }
}

export const isImageUrl = (href: string): boolean => imageExtensions.test(pathOf(href));
export const isVideoUrl = (href: string): boolean => videoExtensions.test(pathOf(href));
