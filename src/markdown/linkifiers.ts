// Realm linkifiers: regex patterns whose matches become links to an RFC 6570 URL template.
import { parseTemplate } from 'url-template';
import { findUrls } from './autolink.js';
import type { Linkifier } from './types.js';
import { safeHref } from './urls.js';

export interface LinkifierMatch {
  start: number;
  end: number;
  text: string;
  url: string;
}

interface CompiledLinkifier {
  regex: RegExp;
  expand: (groups: Record<string, string>) => string;
}

const compiled = new Map<string, CompiledLinkifier | null>();

// Like Zulip, a match must start after whitespace, an opening bracket or quote, a comma or colon, and must
// not run on into a word character. Patterns are written in Python syntax: `(?P<name>…)` names a group.
function compile(linkifier: Linkifier): CompiledLinkifier | null {
  const key = `${linkifier.pattern}\u0000${linkifier.urlTemplate}`;
  const cached = compiled.get(key);
  if (cached !== undefined) return cached;
  let result: CompiledLinkifier | null;
  try {
    const pattern = linkifier.pattern.replace(/\(\?P</g, '(?<');
    const template = parseTemplate(linkifier.urlTemplate);
    result = {
      regex: new RegExp(`(?<![^\\s'"(,:<])(?:${pattern})(?![\\p{L}\\p{N}_])`, 'gu'),
      expand: (groups) => template.expand(groups),
    };
  } catch {
    result = null;
  }
  compiled.set(key, result);
  return result;
}

/** Non-overlapping matches of all linkifiers in `text`; earlier linkifiers win overlaps. */
export function findLinkifierMatches(text: string, linkifiers: readonly Linkifier[], realmUrl: string): LinkifierMatch[] {
  const taken: LinkifierMatch[] = [];
  for (const linkifier of linkifiers) {
    const compiledLinkifier = compile(linkifier);
    if (!compiledLinkifier) continue;
    compiledLinkifier.regex.lastIndex = 0;
    for (const match of text.matchAll(compiledLinkifier.regex)) {
      const start = match.index;
      const end = start + match[0].length;
      if (match[0] === '' || taken.some((t) => start < t.end && t.start < end)) continue;
      const groups: Record<string, string> = {};
      for (const [name, value] of Object.entries(match.groups ?? {})) if (value !== undefined) groups[name] = value;
      const url = safeHref(compiledLinkifier.expand(groups), realmUrl);
      if (url === undefined) continue;
      taken.push({ start, end, text: match[0], url });
    }
  }
  return taken.sort((a, b) => a.start - b.start);
}

/** Links for a topic name: linkifier matches and bare URLs, in the order they appear. */
export function renderTopicLinks(topic: string, linkifiers: Linkifier[]): { text: string; url: string }[] {
  const matches: LinkifierMatch[] = findLinkifierMatches(topic, linkifiers, '');
  for (const found of findUrls(topic)) {
    if (matches.some((m) => found.start < m.end && m.start < found.end)) continue;
    matches.push({ start: found.start, end: found.end, text: found.text, url: found.href });
  }
  return matches.sort((a, b) => a.start - b.start).map(({ text, url }) => ({ text, url }));
}
