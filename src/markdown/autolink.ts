// Finds bare URLs, domains and e-mail addresses in text the way Zulip does:
// - a link starts at the start of text or after whitespace or one of ' " ( , : <;
// - it is `http(s)://host[/path]`, `domain.tld[/path]` (tld from the IANA list), `user@domain.tld` or a
//   bitcoin address (`bitcoin:` and 26-35 base58 characters starting with 1 or 3);
// - paths may hold balanced parentheses nested at most seven deep;
// - it ends where only trailing punctuation `!:;?),.'">` stands before whitespace or the end of the text,
//   taking the shortest path for which that holds (so "url," and "(url)" lose the punctuation).
import { createRequire } from 'node:module';

// The package is one JSON file; required, it loads the same under node and under a TypeScript loader.
const tldList = createRequire(import.meta.url)('tlds') as string[];

// File-name extensions that are also TLDs link far more often by accident than on purpose.
const falsePositiveTlds = new Set(['java', 'md', 'mov', 'py', 'zip']);
const tlds = new Set(tldList.filter((tld) => !falsePositiveTlds.has(tld)));
const longestTld = Math.max(...[...tlds].map((tld) => tld.length));

const startAfter = new Set([`'`, '"', '(', ',', ':', '<']);
const trailing = new Set(['!', ':', ';', '?', ')', ',', '.', "'", '"', '>']);
const maxParenDepth = 7;

const otherWhitespace = /\s/u;
// ASCII first: the regex only for the rest (its \s includes Unicode spaces).
function isWhitespace(c: string | undefined): boolean {
  if (c === undefined) return false;
  const code = c.charCodeAt(0);
  if (code < 128) return code === 32 || (code >= 9 && code <= 13);
  return otherWhitespace.test(c);
}
const otherWordChar = /[\p{L}\p{N}_]/u;
function isWordChar(c: string | undefined): boolean {
  if (c === undefined) return false;
  const code = c.charCodeAt(0);
  if (code < 128) return (code >= 48 && code <= 57) || (code >= 65 && code <= 90) || (code >= 97 && code <= 122) || code === 95;
  return otherWordChar.test(c);
}
const isHostChar = (c: string | undefined): boolean => c !== undefined && (isWordChar(c) || c === '.' || c === ':' || c === '@' || c === '-');
const isDomainChar = (c: string | undefined): boolean => c !== undefined && (isWordChar(c) || c === '-');
const isPathChar = (c: string | undefined): boolean => c !== undefined && !isWhitespace(c) && c !== '(' && c !== ')' && c !== '"';

export interface FoundUrl {
  start: number;
  end: number;
  text: string;
  href: string;
}

const mayStartAt = (text: string, i: number): boolean => i === 0 || isWhitespace(text[i - 1]) || startAfter.has(text[i - 1] ?? '');

/** Whether a link may end at `i`: only trailing punctuation, then whitespace or the end. */
function mayEndAt(text: string, i: number): boolean {
  let j = i;
  while (j < text.length && trailing.has(text[j] ?? '')) j++;
  return j === text.length || isWhitespace(text[j]);
}

/** Every position a path starting at `i` (at a "/") can end at, shortest first. */
function pathEnds(text: string, i: number): number[] {
  const ends: number[] = [];
  // Walks the path; at depth 0 every position is a possible end. Parenthesized groups must close.
  const walk = (from: number, depth: number): number | undefined => {
    let j = from;
    for (;;) {
      if (depth === 0) ends.push(j);
      const c = text[j];
      if (isPathChar(c)) {
        j++;
      } else if (c === '(') {
        if (depth + 1 > maxParenDepth) return undefined;
        const closed = walk(j + 1, depth + 1);
        if (closed === undefined) return undefined;
        j = closed;
      } else if (c === ')' && depth > 0) {
        return j + 1;
      } else {
        return depth === 0 ? j : undefined;
      }
    }
  };
  walk(i + 1, 0);
  return ends;
}

/** The end of the link whose host part ends at `hostEnd`, if any. */
function endWithOptionalPath(text: string, hostEnd: number): number | undefined {
  if (text[hostEnd] === '/') {
    for (const end of pathEnds(text, hostEnd)) if (mayEndAt(text, end)) return end;
  }
  return mayEndAt(text, hostEnd) ? hostEnd : undefined;
}

// Case matters, as in the real server's pattern: "HTTP://" and "EXAMPLE.COM" are no links.
const scheme = /https?:\/\//y;
const emailAddress = /[\p{L}\p{N}_.-]+@[\p{L}\p{N}_.-]+\.[\p{L}\p{N}_]+/uy;

function matchProtocolUrl(text: string, i: number): number | undefined {
  scheme.lastIndex = i;
  if (!scheme.test(text)) return undefined;
  const hostStart = scheme.lastIndex;
  for (let hostEnd = hostStart + 1; hostEnd <= text.length && isHostChar(text[hostEnd - 1]); hostEnd++) {
    const end = endWithOptionalPath(text, hostEnd);
    if (end !== undefined) return end;
  }
  return undefined;
}

function matchDomain(text: string, i: number): number | undefined {
  // Labels separated by dots; the last label must be a TLD. Longer domains are tried first.
  let j = i;
  let dots: number[] | undefined;
  for (;;) {
    const labelStart = j;
    while (isDomainChar(text[j])) j++;
    if (j === labelStart) break;
    if (text[j] !== '.') break;
    (dots ??= []).push(j);
    j++;
  }
  if (!dots) return undefined;
  for (let d = dots.length - 1; d >= 0; d--) {
    const tldStart = (dots[d] ?? 0) + 1;
    let tldEnd = tldStart;
    while (isDomainChar(text[tldEnd])) tldEnd++;
    // Like a regex alternation, a TLD may also be a prefix of the label ("co" in "com").
    for (let end = Math.min(tldEnd, tldStart + longestTld); end > tldStart; end--) {
      if (!tlds.has(text.slice(tldStart, end))) continue;
      const linkEnd = endWithOptionalPath(text, end);
      if (linkEnd !== undefined) return linkEnd;
    }
  }
  return undefined;
}

function matchEmail(text: string, i: number): number | undefined {
  emailAddress.lastIndex = i;
  if (!emailAddress.test(text)) return undefined;
  // Backtrack like a regex would: the address may end early, before trailing punctuation.
  for (let end = emailAddress.lastIndex; end > i; end--) {
    const candidate = text.slice(i, end);
    if (/^[\p{L}\p{N}_.-]+@[\p{L}\p{N}_.-]+\.[\p{L}\p{N}_]+$/u.test(candidate) && mayEndAt(text, end)) return end;
  }
  return undefined;
}

const base58 = /[1-9A-HJ-NP-Za-km-z]/;

function matchBitcoin(text: string, i: number): number | undefined {
  if (!text.startsWith('bitcoin:', i)) return undefined;
  const first = text[i + 8];
  if (first !== '1' && first !== '3') return undefined;
  // Shorter runs are followed by another base58 character, which cannot end a link: only the whole run can.
  let end = i + 9;
  while (end < text.length && base58.test(text[end]!)) end++;
  const length = end - (i + 9);
  return length >= 25 && length <= 34 && mayEndAt(text, end) ? end : undefined;
}

export function findUrls(text: string): FoundUrl[] {
  const found: FoundUrl[] = [];
  // Each kind of link needs a character that most text lacks: a protocol URL starts with "h", a domain holds a
  // dot, an address an "@" and a bitcoin address "bitcoin:". Those without it are not tried.
  const hasDot = text.includes('.');
  const hasAt = text.includes('@');
  const hasBitcoin = text.includes('bitcoin:');
  if (!hasDot && !hasAt && !hasBitcoin && !text.includes('http')) return found;
  let i = 0;
  while (i < text.length) {
    if (!mayStartAt(text, i) || isWhitespace(text[i])) {
      i++;
      continue;
    }
    const first = text.charCodeAt(i);
    const protocolEnd = first === 0x68 /* h */ ? matchProtocolUrl(text, i) : undefined;
    const bitcoinEnd = hasBitcoin && first === 0x62 /* b */ ? matchBitcoin(text, i) : undefined;
    const end = protocolEnd ?? (hasDot ? matchDomain(text, i) : undefined) ?? (hasAt ? matchEmail(text, i) : undefined) ?? bitcoinEnd;
    if (end === undefined) {
      i++;
      continue;
    }
    const url = text.slice(i, end);
    const href =
      protocolEnd !== undefined || end === bitcoinEnd ? url : url.includes('@') && !url.includes('/') ? `mailto:${url}` : `http://${url}`;
    found.push({ start: i, end, text: url, href });
    i = end;
  }
  return found;
}
