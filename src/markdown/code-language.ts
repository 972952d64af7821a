// The display name Zulip puts in data-code-language: the canonical language name for a fence's language tag.
// Linguist's language list stands in for Pygments' lexer names; they agree on the common languages.
import * as linguist from 'linguist-languages';

interface LanguageEntry {
  name: string;
  aliases?: readonly string[];
  extensions?: readonly string[];
}

const byAlias = new Map<string, string>();
const languages = Object.values(linguist) as LanguageEntry[];
for (const language of languages) byAlias.set(language.name.toLowerCase(), language.name);
for (const language of languages) for (const alias of language.aliases ?? []) if (!byAlias.has(alias)) byAlias.set(alias, language.name);
for (const language of languages) {
  for (const extension of language.extensions ?? []) {
    const key = extension.replace(/^\./, '').toLowerCase();
    if (!byAlias.has(key)) byAlias.set(key, language.name);
  }
}

/** "py" → "Python", "css+php" → "CSS+PHP"; an unknown language is kept as written. */
export function canonicalLanguageName(lang: string): string {
  const whole = byAlias.get(lang.toLowerCase());
  if (whole) return whole;
  const parts = lang.split('+');
  if (parts.length > 1 && parts.every((part) => byAlias.has(part.toLowerCase()))) {
    return parts.map((part) => byAlias.get(part.toLowerCase())).join('+');
  }
  return lang;
}
