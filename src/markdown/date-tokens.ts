// Splits a written date into the tokens the real server's date parser (python-dateutil) works on.
//
// A token is a run of letters, a run of digits, one whitespace character (always written ' '), or any other
// single character. Dots and commas are the hard part: "4:30:21.447" has a decimal point, "Sep.20.2009" and
// "a.m." have dots as separators. A run that mixes letters and dots, or digits and dots, is therefore read
// whole first and split at its dots and commas afterwards unless it is a plain decimal number ("21.447").

// The character classes of Python's str.isalpha / isdigit / isspace, which the real server's parser uses.
const letterPattern = /^\p{L}$/u;
const decimal = /^\p{Nd}$/u;
// Also digits to isdigit, though not to int(): superscripts, subscripts, circled digits and a few more.
const otherDigits = '\\u{b2}-\\u{b3}\\u{b9}\\u{1369}-\\u{1371}\\u{19da}\\u{2070}\\u{2074}-\\u{2079}\\u{2080}-\\u{2089}\\u{2460}-\\u{2468}\\u{2474}-\\u{247c}\\u{2488}-\\u{2490}\\u{24ea}\\u{24f5}-\\u{24fd}\\u{24ff}\\u{2776}-\\u{277e}\\u{2780}-\\u{2788}\\u{278a}-\\u{2792}\\u{10a40}-\\u{10a43}\\u{10e60}-\\u{10e68}\\u{11052}-\\u{1105a}\\u{1f100}-\\u{1f10a}';
const digitPattern = new RegExp(`^[\\p{Nd}${otherDigits}]$`, 'u');
// ASCII first: most dates are ASCII, and the Unicode patterns cost more.
const isLetter = (char: string): boolean =>
  (char >= 'a' && char <= 'z') || (char >= 'A' && char <= 'Z') || (char > '\x7f' && letterPattern.test(char));
const isDigit = (char: string): boolean => (char >= '0' && char <= '9') || (char > '\x7f' && digitPattern.test(char));
const digits = new RegExp(`^[\\p{Nd}${otherDigits}]+$`, 'u');

/** Whether a token is all digits to Python's str.isdigit (int() still refuses some of them). */
export const isDigitWord = (token: string | undefined): boolean => token !== undefined && digits.test(token);
const spaces = '\\t-\\r\\x1c-\\x20\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';
const space = new RegExp(`^[${spaces}]$`, 'u');
const outerSpace = new RegExp(`^[${spaces}]+|[${spaces}]+$`, 'gu');

/** The text without the whitespace around it, as Python's str.strip() sees whitespace. */
export const trimDateSpace = (text: string): string => text.replace(outerSpace, '');

// word: letters; number: digits; dotted…: a run with dots (and, after two digits, a decimal comma) in it.
type RunKind = 'word' | 'number' | 'dottedWord' | 'dottedNumber';

/** The kind the run becomes with `char` added, or undefined when `char` starts the next token. */
function extend(kind: RunKind, last: string, size: number, char: string): RunKind | undefined {
  const afterDot = last === '.';
  switch (kind) {
    case 'word':
      if (isLetter(char)) return 'word';
      return char === '.' ? 'dottedWord' : undefined;
    case 'number':
      if (isDigit(char)) return 'number';
      return char === '.' || (char === ',' && size >= 2) ? 'dottedNumber' : undefined;
    case 'dottedWord':
      if (char === '.' || isLetter(char)) return 'dottedWord';
      return isDigit(char) && afterDot ? 'dottedNumber' : undefined;
    case 'dottedNumber':
      if (char === '.' || isDigit(char)) return 'dottedNumber';
      return isLetter(char) && afterDot ? 'dottedWord' : undefined;
  }
}

/** A dotted run as tokens: kept whole when it is a decimal number, else split at its dots and commas. */
function dottedRunTokens(run: string, kind: RunKind, sawLetters: boolean): string[] {
  const dots = run.split('.').length - 1;
  if (sawLetters || dots > 1 || run.endsWith('.') || run.endsWith(',')) {
    return run.split(/([.,])/).filter((piece, i) => i === 0 || piece !== '');
  }
  // "12,5" with a decimal comma
  return [kind === 'dottedNumber' && dots === 0 ? run.replaceAll(',', '.') : run];
}

/**
 * The text with every decimal digit (Arabic-Indic, Devanagari, …) written as its ASCII digit, as Python's
 * int() and float() read them. Unicode keeps each script's digits 0 to 9 in consecutive code points.
 */
export function asciiDigits(text: string): string {
  return text.replace(/\P{ASCII}/gu, (char) => {
    if (!decimal.test(char)) return char;
    let digit = digitValues.get(char);
    if (digit === undefined) {
      const code = char.codePointAt(0)!;
      let zero = code;
      while (decimal.test(String.fromCodePoint(zero - 1))) zero--;
      digit = String((code - zero) % 10);
      digitValues.set(char, digit);
    }
    return digit;
  });
}
const digitValues = new Map<string, string>();

export function dateTokens(input: string): string[] {
  // NUL characters are dropped before anything else.
  const chars = Array.from(asciiDigits(input)).filter((char) => char !== '\0');
  const tokens: string[] = [];
  let at = 0;
  while (at < chars.length) {
    const first = chars[at++]!;
    let kind: RunKind | undefined = isLetter(first) ? 'word' : isDigit(first) ? 'number' : undefined;
    if (kind === undefined) {
      tokens.push(space.test(first) ? ' ' : first);
      continue;
    }
    const start = at - 1;
    // Whether a character was looked at while the run was letters; only dotted runs care.
    let sawLetters = false;
    while (at < chars.length) {
      const char = chars[at]!;
      if (kind === 'word' || kind === 'dottedWord') sawLetters = true;
      const next = extend(kind, chars[at - 1]!, at - start, char);
      if (next === undefined) break;
      kind = next;
      at++;
    }
    const run = at - start === 1 ? first : chars.slice(start, at).join('');
    if (kind === 'word' || kind === 'number') tokens.push(run);
    else tokens.push(...dottedRunTokens(run, kind, sawLetters));
  }
  return tokens;
}
