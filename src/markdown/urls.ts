// Which link targets a message may carry, and how Zulip spells narrow URLs.

const allowedSchemes = new Set(['http', 'https', 'ftp', 'mailto', 'tel', 'sms']);

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
  const isPort = scheme !== undefined && /^\d/.test(probe.slice(scheme.length + 1));
  if (scheme !== undefined && !isPort) {
    if (!allowedSchemes.has(scheme)) return undefined;
    return relativeToRealm(url, realmUrl);
  }
  if (url.startsWith('#') || url.startsWith('/')) return url;
  if (/^[^/]+@[^/]+\.[^/]+$/.test(url)) return `mailto:${url}`;
  return `http://${url}`;
}

/** Links to the realm's own web app views become fragment links, so they open in place. */
function relativeToRealm(url: string, realmUrl: string): string {
  const prefix = `${realmUrl}/#`;
  return url.startsWith(prefix) ? url.slice(realmUrl.length + 1) : url;
}

/** Zulip's URL-fragment encoding: percent-encode everything but `-_~` letters and digits, then `%` → `.`. */
export function encodeHashComponent(value: string): string {
  return encodeURIComponent(value)
    .replace(/[!'()*.]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
    .replace(/%/g, '.');
}

export function channelNarrowUrl(channel: { id: number; name: string }): string {
  return `/#narrow/channel/${channel.id}-${encodeHashComponent(channel.name)}`;
}

/** The path of an uploaded file (e.g. "/user_uploads/2/ab/xyz/file.png") the href points to, if any. */
export function uploadPath(href: string, realmUrl: string): string | undefined {
  let path = href;
  if (path.startsWith(realmUrl + '/')) path = path.slice(realmUrl.length);
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
