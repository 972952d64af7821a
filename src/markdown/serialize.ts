// Final touches on serialized HTML that hast-util-to-html does not offer as options: Zulip escapes ">" in
// text, `"` inside code blocks (as Pygments does), and both quotes in a display-math error (which the real
// server escapes with Django's escape()).

/** Class that marks a display-math error for this pass; it is taken off the output. */
export const QUOTE_ESCAPED_CLASS = 'zulip-quotes-escaped';
const quoteEscapedOpen = `<span class="tex-error ${QUOTE_ESCAPED_CLASS}">`;

/** Escapes `>` in text content and `"` in text inside <pre>; tags and attribute values pass unchanged. */
export function escapeTextLikeZulip(html: string): string {
  let out = '';
  let preDepth = 0;
  // Inside a marked display-math error: its content is text only, up to the closing </span>.
  let quotesEscaped = false;
  let i = 0;
  while (i < html.length) {
    const c = html[i];
    if (c === '<') {
      // A tag: "<" in text is always escaped by the serializer, so this starts markup. Quoted attribute
      // values may contain ">".
      let j = i + 1;
      let quote: string | null = null;
      while (j < html.length) {
        const d = html[j];
        if (quote) {
          if (d === quote) quote = null;
        } else if (d === '"' || d === "'") {
          quote = d;
        } else if (d === '>') {
          break;
        }
        j++;
      }
      let tag = html.slice(i, j + 1);
      if (/^<pre[\s>]/i.test(tag)) preDepth++;
      else if (/^<\/pre>/i.test(tag)) preDepth = Math.max(0, preDepth - 1);
      else if (tag === quoteEscapedOpen) {
        tag = '<span class="tex-error">';
        quotesEscaped = true;
      } else if (tag === '</span>') quotesEscaped = false;
      out += tag;
      i = j + 1;
      continue;
    }
    if (c === '>') out += '&gt;';
    else if (c === '"' && (preDepth > 0 || quotesEscaped)) out += '&quot;';
    else if (c === "'" && quotesEscaped) out += '&#x27;';
    else out += c;
    i++;
  }
  return out;
}
