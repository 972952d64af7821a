// Realm linkifiers: regex patterns whose matches become links to an RFC 6570 URL template.
import type { RE2JS } from 're2js';
import { parseTemplate } from 'url-template';
import { compileRe2, namedGroups } from '../domain/linkifiers/re2-pattern.js';
import type { Linkifier } from './types.js';
import { safeHref } from './urls.js';

export interface LinkifierMatch {
  start: number;
  end: number;
  text: string;
  url: string;
}

interface CompiledLinkifier {
  regex: RE2JS;
  expand: (groups: Record<string, string>) => string;
  groupNames: string[];
}

const compiled = new Map<string, CompiledLinkifier | null>();
// Names the user's part of the compiled pattern; a name RE2 allows but no linkifier would use.
const whole = 'zulipLinkifierMatch0';

// Like Zulip, a match must start after whitespace (Unicode's too: a no-break space), an opening bracket or
// quote, a comma or colon, and must not run on into a letter or digit. RE2 has no lookaround, so the compiled
// pattern consumes the characters around the match and the search resumes where the user's part ended. A pattern RE2 refuses (possible only
// for linkifiers stored before patterns were checked with RE2) never matches.
// The same realm's linkifier objects come back render after render: looked up by identity first.
const compiledByObject = new WeakMap<Linkifier, CompiledLinkifier | null>();

function compile(linkifier: Linkifier): CompiledLinkifier | null {
  const known = compiledByObject.get(linkifier);
  if (known !== undefined) return known;
  const result = compileByText(linkifier);
  compiledByObject.set(linkifier, result);
  return result;
}

function compileByText(linkifier: Linkifier): CompiledLinkifier | null {
  const key = `${linkifier.pattern}\u0000${linkifier.urlTemplate}`;
  const cached = compiled.get(key);
  if (cached !== undefined) return cached;
  let result: CompiledLinkifier | null;
  try {
    const own = compileRe2(linkifier.pattern);
    const template = parseTemplate(linkifier.urlTemplate);
    result = {
      regex: compileRe2(`(?:^|[\\s\\x{85}\\pZ'"(,:<])(?P<${whole}>${linkifier.pattern})(?:$|[^\\pL\\pN])`),
      expand: (groups) => template.expand(groups),
      groupNames: namedGroups(own),
    };
  } catch {
    result = null;
  }
  compiled.set(key, result);
  return result;
}

function* matchesOf(text: string, linkifier: CompiledLinkifier): Generator<{ start: number; end: number; groups: Record<string, string>; outerStart: number }> {
  const matcher = linkifier.regex.matcher(text);
  let from = 0;
  while (from <= text.length && matcher.find(from)) {
    const start = matcher.start(whole);
    const end = matcher.end(whole);
    if (end === start) {
      from = Math.max(matcher.end(), from + 1);
      continue;
    }
    from = end;
    const groups: Record<string, string> = {};
    for (const name of linkifier.groupNames) {
      const value = matcher.group(name);
      if (value !== null) groups[name] = value;
    }
    yield { start, end, groups, outerStart: matcher.start() };
  }
}

/**
 * Every match of one linkifier in `text`, with its expanded URL as the template gives it (unchecked) and where the
 * whole match starts, the character before the linkifier's own part included.
 */
export function* linkifierMatches(text: string, linkifier: Linkifier): Generator<LinkifierMatch & { outerStart: number }> {
  const compiledLinkifier = compile(linkifier);
  if (!compiledLinkifier) return;
  for (const { start, end, groups, outerStart } of matchesOf(text, compiledLinkifier)) {
    yield { start, end, text: text.slice(start, end), url: compiledLinkifier.expand(groups), outerStart };
  }
}

/** Non-overlapping matches of all linkifiers in `text`; earlier linkifiers win overlaps. */
export function findLinkifierMatches(text: string, linkifiers: readonly Linkifier[], realmUrl: string): LinkifierMatch[] {
  const taken: LinkifierMatch[] = [];
  for (const linkifier of linkifiers) {
    const compiledLinkifier = compile(linkifier);
    if (!compiledLinkifier) continue;
    for (const { start, end, groups } of matchesOf(text, compiledLinkifier)) {
      if (taken.some((t) => start < t.end && t.start < end)) continue;
      const url = safeHref(compiledLinkifier.expand(groups), realmUrl);
      if (url === undefined) continue;
      taken.push({ start, end, text: text.slice(start, end), url });
    }
  }
  return taken.sort((a, b) => a.start - b.start);
}
