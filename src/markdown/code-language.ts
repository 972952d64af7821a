// The display name Zulip puts in data-code-language: the canonical Pygments lexer name for a fence's language
// tag ("py" → "Python", "py2" → "Python 2.x"). Pygments matches aliases case-insensitively; a tag it does not
// know is kept as the user wrote it (the real server does so for its code playgrounds).
import { pygmentsLexerNames } from './pygments-lexer-names.js';

const byAlias = new Map<string, string>(Object.entries(pygmentsLexerNames));

export function canonicalLanguageName(lang: string): string {
  return byAlias.get(lang.toLowerCase()) ?? lang;
}

/** Whether Pygments has a lexer for `lang` that does more than pass the text through. */
export function highlightable(lang: string): boolean {
  const name = byAlias.get(lang.toLowerCase());
  return name !== undefined && name !== 'Text only';
}
