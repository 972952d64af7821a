import { parseTemplate } from 'url-template';

/**
 * The variable names of an RFC 6570 URI template, or null when the template is not valid.
 * `url-template` expands templates but neither validates them nor lists their variables, so this
 * reads the grammar of section 2: literals, and expressions `{[operator]varspec,...}` where a
 * varspec is a varname with an optional `:length` prefix or `*` explode modifier.
 */
export function templateVariables(template: string): string[] | null {
  const names: string[] = [];
  let i = 0;
  while (i < template.length) {
    const ch = template[i]!;
    if (ch === '}') return null;
    if (ch !== '{') {
      // Literals: any character but controls, space and "'<>\^`{|}. A '%' need not start a
      // percent-encoding: the real server's validator takes "https://example.com/%%(foo)s".
      if (/[\u0000-\u0020"'<>\\^`|]/.test(ch)) return null;
      i += 1;
      continue;
    }
    const end = template.indexOf('}', i + 1);
    if (end < 0) return null;
    let body = template.slice(i + 1, end);
    if (/^[+#./;?&]/.test(body)) body = body.slice(1);
    else if (/^[=,!@|]/.test(body)) return null; // reserved for future extensions
    if (body === '') return null;
    for (const spec of body.split(',')) {
      const match = /^((?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})+(?:\.(?:[A-Za-z0-9_]|%[0-9A-Fa-f]{2})+)*)(?::([1-9][0-9]{0,3})|\*)?$/.exec(spec);
      if (!match) return null;
      names.push(match[1]!);
    }
    i = end + 1;
  }
  try {
    parseTemplate(template);
  } catch {
    return null;
  }
  return names;
}

/** Expands a template with url-template (RFC 6570, all levels). */
export function expandTemplate(template: string, values: Record<string, string>): string {
  return parseTemplate(template).expand(values);
}

/**
 * A deliberate difference from the real server, which takes any RFC 6570 template: one that starts with a scheme
 * other than http(s), ftp(s) or mailto is refused. Clients expand linkifier and playground templates themselves
 * (the web app's local echo, topic links, "View in playground"), so a `javascript:` template would be a script
 * link in every client, whatever our renderer drops. A template without a scheme (a relative link) is accepted.
 */
export function scriptCapableScheme(urlTemplate: string): boolean {
  const scheme = /^\s*([a-z][a-z0-9+.-]*):/i.exec(urlTemplate)?.[1];
  return scheme !== undefined && !/^(https?|ftps?|mailto)$/i.test(scheme);
}
