// Final touches on serialized HTML that hast-util-to-html does not offer as options: Zulip escapes ">" in
// text, and `"` inside code blocks (as Pygments does).

/** Escapes `>` in text content and `"` in text inside <pre>; tags and attribute values pass unchanged. */
export function escapeTextLikeZulip(html: string): string {
  let out = '';
  let preDepth = 0;
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
      const tag = html.slice(i, j + 1);
      if (/^<pre[\s>]/i.test(tag)) preDepth++;
      else if (/^<\/pre>/i.test(tag)) preDepth = Math.max(0, preDepth - 1);
      out += tag;
      i = j + 1;
      continue;
    }
    if (c === '>') out += '&gt;';
    else if (c === '"' && preDepth > 0) out += '&quot;';
    else out += c;
    i++;
  }
  return out;
}
