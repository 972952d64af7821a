// Final touches on serialized HTML that hast-util-to-html does not offer as options: Zulip escapes ">" in
// text, and `"` inside code blocks (as Pygments does).

const tagBoundary = /["'>]/g;

/**
 * Escapes `>` in text content and `"` in text inside <pre>; tags and attribute values pass unchanged. Works
 * on whole runs of text and tags (a message of many math formulas is megabytes of markup).
 */
export function escapeTextLikeZulip(html: string): string {
  const parts: string[] = [];
  let preDepth = 0;
  let i = 0;
  while (i < html.length) {
    const tagStart = html.indexOf('<', i);
    const textEnd = tagStart === -1 ? html.length : tagStart;
    if (textEnd > i) {
      let text = html.slice(i, textEnd).replaceAll('>', '&gt;');
      if (preDepth > 0) text = text.replaceAll('"', '&quot;');
      parts.push(text);
    }
    if (tagStart === -1) break;
    // A tag: "<" in text is always escaped by the serializer, so this starts markup. Quoted attribute
    // values may contain ">".
    const tagEnd = endOfTag(html, tagStart + 1);
    const tag = html.slice(tagStart, tagEnd + 1);
    // Only tags starting "<p", "<P", "</" can be <pre> or </pre>: the regexes run on few of them.
    const second = tag.charCodeAt(1) | 0x20;
    if (second === 0x70 /* p */ && /^<pre[\s>]/i.test(tag)) preDepth++;
    else if (second === 0x2f /* / */ && /^<\/pre>/i.test(tag)) preDepth = Math.max(0, preDepth - 1);
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
