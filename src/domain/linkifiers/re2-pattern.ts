// Linkifier patterns are RE2 patterns, as on the real server: RE2 has no backtracking (no lookaround, no
// backreferences), so matching costs linear time whatever the pattern. re2js is a pure-JavaScript port of
// RE2; it reports errors with Go's wording, which is mapped here to the C++ RE2 wording the real server shows.
import { RE2JS, RE2JSSyntaxException } from 're2js';

export class Re2PatternError extends Error {}

// Go/RE2J error code → C++ RE2 error code text.
const cppWording: Record<string, string> = {
  'missing closing )': 'missing )',
  'unexpected )': 'unexpected )',
  'missing closing ]': 'missing ]',
  'invalid or unsupported Perl syntax': 'invalid perl operator',
  'invalid escape sequence': 'invalid escape sequence',
  'invalid character class': 'invalid character class',
  'invalid character class range': 'invalid character class range',
  'invalid nested repetition operator': 'bad repetition operator',
  'invalid repeat count': 'bad repetition operator',
  'missing argument to repetition operator': 'no argument for repetition operator',
  'trailing backslash at end of expression': 'trailing \\',
  'invalid named capture': 'invalid named capture group',
  'duplicate capture group name': 'invalid named capture group',
  'invalid UTF-8': 'invalid UTF-8',
};

/** Compiles a pattern with RE2's syntax (`(?P<name>…)` and `(?<name>…)` name groups); throws Re2PatternError. */
export function compileRe2(pattern: string): RE2JS {
  try {
    return RE2JS.compile(pattern);
  } catch (error) {
    if (error instanceof RE2JSSyntaxException) {
      const code = cppWording[error.error ?? ''] ?? 'pattern too large - compile failed';
      throw new Re2PatternError(error.input ? `${code}: ${error.input}` : code);
    }
    throw new Re2PatternError('pattern too large - compile failed');
  }
}

/** The names of a compiled pattern's named groups. */
export const namedGroups = (regex: RE2JS): string[] => Object.keys(regex.namedGroups());
