// A topic's links (`topic_links` of a message), as the real server finds them: its own rules, not the message
// body's. Linkifier matches in linkifier order, then bare URLs, each URL found in a piece of the topic between
// spaces and `!;),'"`; a match is dropped when it overlaps one taken before it; the rest in topic order.
import { findUrls } from './autolink.js';
import { linkifierMatches } from './linkifiers.js';
import type { Linkifier } from './types.js';
import { safeHref } from './urls.js';

interface TopicLink {
  text: string;
  url: string;
  /** Where the match counts as starting: for a linkifier, the character before its match (as the real server counts it). */
  index: number;
}

const pieceEnd = /[ !;),'"]/g;
const hasScheme = /^[A-Za-z][A-Za-z0-9+.-]*:/;

/** The first bare URL of each piece of the topic; a URL without a scheme gets https:// (an address too). */
function bareUrls(topic: string): TopicLink[] {
  const links: TopicLink[] = [];
  let pos = 0;
  while (pos < topic.length) {
    pieceEnd.lastIndex = pos;
    const end = pieceEnd.exec(topic)?.index ?? topic.length;
    const found = findUrls(topic.slice(pos, end))[0];
    if (found) links.push({ text: found.text, url: hasScheme.test(found.text) ? found.text : `https://${found.text}`, index: pos });
    pos = end + 1;
  }
  return links;
}

export function renderTopicLinks(topic: string, linkifiers: readonly Linkifier[]): { text: string; url: string }[] {
  const candidates: TopicLink[] = [];
  for (const linkifier of linkifiers) {
    const own: TopicLink[] = [];
    for (const match of linkifierMatches(topic, linkifier)) {
      // A template that makes an unsafe link (javascript: and the like) gives none; a safe one is sent as expanded.
      if (safeHref(match.url, '') !== undefined) own.push({ text: match.text, url: match.url, index: match.outerStart });
    }
    candidates.push(...own.sort((a, b) => a.index - b.index));
  }
  candidates.push(...bareUrls(topic));
  const taken: TopicLink[] = [];
  const overlap = (a: TopicLink, b: TopicLink): boolean =>
    (b.index <= a.index && a.index < b.index + b.text.length) || (a.index <= b.index && b.index < a.index + a.text.length);
  for (const candidate of candidates) if (!taken.some((kept) => overlap(kept, candidate))) taken.push(candidate);
  return taken.sort((a, b) => a.index - b.index).map(({ text, url }) => ({ text, url }));
}
