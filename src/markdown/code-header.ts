// CodeHilite's header line: a code block without a language may name one on its first line, as `:::python`,
// `#!python` or `#!/usr/bin/env python`, optionally followed by `hl_lines="1 3"` (lines to mark). The real
// server keeps that line in a fenced block (its CodeHilite subclass only reads it: a one-line block starting
// with `#!` must not render empty), while an indented block goes through Python-Markdown's own CodeHilite,
// which drops the line unless it names a path.

/** Colons or `#!`, an optional path, the language, optional hl_lines: Python-Markdown's header pattern. */
const headerPattern = /^(?:::+|#!)((?:\/[\p{L}\p{N}\p{M}_]+)*[/ ])?([\p{L}\p{N}\p{M}_#.+-]*)\s*(?:hl_lines=(["'])(.*?)\3)?/u;

export interface CodeHeader {
  /** Lower-cased; may be empty (then no lexer: plain text). */
  lang: string;
  hlLines: number[];
  /** The code with the header line dropped when the rule drops it. */
  code: string;
}

/** Lines to mark: numbers separated by spaces; anything else marks none (as Python-Markdown's parse_hl_lines). */
function parseHlLines(expression: string | undefined): number[] {
  const words = (expression ?? '').split(/\s+/).filter((word) => word !== '');
  if (!words.every((word) => /^[+-]?\d+$/.test(word))) return [];
  return words.map(Number);
}

/** The header of `code` (already stripped of blank lines around it), or undefined when its first line is none. */
export function codeHeader(code: string, fenced: boolean): CodeHeader | undefined {
  const lineEnd = code.indexOf('\n');
  const first = lineEnd === -1 ? code : code.slice(0, lineEnd);
  const match = headerPattern.exec(first);
  if (!match) return undefined;
  const [, path, lang, , hlLines] = match;
  const keepLine = fenced || path !== undefined;
  const rest = lineEnd === -1 ? '' : code.slice(lineEnd + 1);
  return { lang: (lang ?? '').toLowerCase(), hlLines: parseHlLines(hlLines), code: keepLine ? code : rest.replace(/^\n+/, '') };
}
