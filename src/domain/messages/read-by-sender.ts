/**
 * Whether a message is read for its own sender when the request does not say (read_by_sender
 * unset): the real server's heuristic on the sending client's name. A person writing in a Zulip app
 * has read what they wrote; a message sent through the API with their key (an integration, a
 * script, a calendar reminder) is news to them and stays unread.
 */
const APP_CLIENTS = new Set([
  'zulipandroid', 'zulipios', 'zulipdesktop', 'zulipmobile', 'zulipelectron', 'zulipterminal', 'snipe', 'website', 'ios', 'android',
]);

export function defaultReadBySender(client: string): boolean {
  const name = client.toLowerCase();
  return APP_CLIENTS.has(name) || name.includes('desktop app');
}
