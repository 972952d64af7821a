/**
 * The name a request's client goes by (a message's `client`, the read_by_sender default), as the real server
 * derives it: a `client` parameter wins; else the name the User-Agent starts with, by the real server's pattern
 * (zerver/lib/user_agent.py: up to the version's `/`, so `Zulip Terminal/0.7` is `Zulip Terminal`); with no
 * User-Agent, or one the pattern refuses, `Unspecified`.
 */
const USER_AGENT = /^([^/ ]*[^0-9/(]*)(?:\/[^/ ]*)?(?:[ /].*)?$/;
/** The real server's Client.name column holds at most this many characters. */
const MAX_CLIENT_NAME = 30;

export function clientName(requested: unknown, userAgent: string | undefined): string {
  if (typeof requested === 'string') return requested.slice(0, MAX_CLIENT_NAME);
  const name = userAgent === undefined ? undefined : USER_AGENT.exec(userAgent)?.[1];
  return (name ?? 'Unspecified').slice(0, MAX_CLIENT_NAME);
}
