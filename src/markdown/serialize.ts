// Final touches on serialized HTML that hast-util-to-html does not offer as options: Zulip escapes ">" in
// text, `"` inside code blocks (as Pygments does), and both quotes in a display-math error (which the real
// server escapes with Django's escape()); and it leaves the "&" of a character reference in text as it is
// ("&copy;" stays "&copy;"), except in code and in KaTeX's output, which escape every "&".

/** Class that marks a display-math error for this pass; it is taken off the output. */
export const QUOTE_ESCAPED_CLASS = 'zulip-quotes-escaped';
const quoteEscapedOpen = `<span class="tex-error ${QUOTE_ESCAPED_CLASS}">`;

const tagBoundary = /["'>]/g;
// An escaped "&" that starts a character reference as Python-Markdown recognizes one.
const escapedReferenceStart = /&amp;(?=(?:#[0-9]+|#x[0-9a-f]+|[0-9a-z]+);)/gi;
const katexOpen = /^<span class="katex(?:-display)?"/;

/**
 * Escapes `>` in text content and `"` in text inside <pre>; tags and attribute values pass unchanged. Works
 * on whole runs of text and tags (a message of many math formulas is megabytes of markup).
 */
export function escapeTextLikeZulip(html: string): string {
  const parts: string[] = [];
  let preDepth = 0;
  let codeDepth = 0;
  // Spans open inside KaTeX's output (0: outside it).
  let katexSpans = 0;
  // Inside a marked display-math error: its content is text only, up to the closing </span>.
  let quotesEscaped = false;
  let i = 0;
  while (i < html.length) {
    const tagStart = html.indexOf('<', i);
    const textEnd = tagStart === -1 ? html.length : tagStart;
    if (textEnd > i) {
      let text = html.slice(i, textEnd).replaceAll('>', '&gt;');
      if (preDepth > 0 || quotesEscaped) text = text.replaceAll('"', '&quot;');
      if (quotesEscaped) text = text.replaceAll("'", '&#x27;');
      else if (preDepth === 0 && codeDepth === 0 && katexSpans === 0 && text.includes('&amp;')) text = text.replace(escapedReferenceStart, '&');
      parts.push(text);
    }
    if (tagStart === -1) break;
    // A tag: "<" in text is always escaped by the serializer, so this starts markup. Quoted attribute
    // values may contain ">".
    const tagEnd = endOfTag(html, tagStart + 1);
    let tag = html.slice(tagStart, tagEnd + 1);
    // Only tags starting "<p", "<c", "</", "<s" can change the state: the comparisons run on few of them.
    const second = tag.charCodeAt(1) | 0x20;
    if (second === 0x70 /* p */ && /^<pre[\s>]/i.test(tag)) preDepth++;
    else if (second === 0x63 /* c */ && /^<code[\s>]/i.test(tag)) codeDepth++;
    else if (second === 0x2f /* / */) {
      if (/^<\/pre>/i.test(tag)) preDepth = Math.max(0, preDepth - 1);
      else if (/^<\/code>/i.test(tag)) codeDepth = Math.max(0, codeDepth - 1);
      else if (tag === '</span>') {
        if (katexSpans > 0) katexSpans--;
        else if (quotesEscaped) quotesEscaped = false;
      }
    } else if (second === 0x73 /* s */) {
      if (tag === quoteEscapedOpen) {
        tag = '<span class="tex-error">';
        quotesEscaped = true;
      } else if (katexSpans > 0 || katexOpen.test(tag)) katexSpans++;
    }
    parts.push(tag);
    i = tagEnd + 1;
  }
  return parts.join('');
}

/** The index of the `>` closing the tag whose name starts at `from` (outside quotes), or the end of the HTML. */
function endOfTag(html: string, from: number): number {
  tagBoundary.lastIndex = from;
  for (;;) {
    const match = tagBoundary.exec(html);
    if (!match) return html.length;
    if (match[0] === '>') return match.index;
    const close = html.indexOf(match[0], match.index + 1);
    if (close === -1) return html.length;
    tagBoundary.lastIndex = close + 1;
  }
}
