// Global times: `<time:…>` shows a moment in each reader's own time zone.
import type { MdNode } from './tree.js';
import { element, text } from './tree.js';
import { DateMembers } from './date-members.js';

const latestYear = 9999;

// The time zone abbreviations the real server understands (seconds east of UTC). Several are ambiguous (IST,
// CST, BST); the real server settles each on one zone, and so must we, for both to agree on the moment.
const zoneAbbreviations: Readonly<Record<string, number>> = {
  SST: -39600, HST: -36000, AKST: -32400, HDT: -32400, AKDT: -28800, PST: -28800, MST: -25200, PDT: -25200,
  CST: -21600, MDT: -21600, CDT: -18000, EST: -18000, AST: -14400, EDT: -14400, NST: -12600, ADT: -10800,
  NDT: -9000, GMT: 0, UTC: 0, WET: 0, BST: 3600, CET: 3600, MET: 3600, WAT: 3600, WEST: 3600, CAT: 7200,
  CEST: 7200, EET: 7200, MEST: 7200, SAST: 7200, EAT: 10800, EEST: 10800, IDT: 10800, MSK: 10800, PKT: 18000,
  IST: 19800, WIB: 25200, AWST: 28800, HKT: 28800, WITA: 28800, JST: 32400, KST: 32400, WIT: 32400,
  ACST: 34200, AEST: 36000, ACDT: 37800, AEDT: 39600, NZST: 43200, NZDT: 46800,
};

/** "+0530" for 19800. */
function utcOffset(seconds: number): string {
  const minutes = Math.abs(seconds) / 60;
  const pad = (n: number): string => String(n).padStart(2, '0');
  return `${seconds < 0 ? '-' : '+'}${pad(Math.floor(minutes / 60))}${pad(minutes % 60)}`;
}

// Words a date may end with that are not zones.
const notZones = new Set(['AM', 'PM', 'JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'SEPT', 'OCT', 'NOV', 'DEC']);

/**
 * A zone abbreviation ending the time ("5:30 am IST") becomes its UTC offset. Like the real server's date
 * parser, an upper-case word it does not know in that place is ignored: the time is then read as UTC.
 */
function withZoneOffset(value: string): string {
  const match = /^(.*\d.*?)\s+([A-Z]{1,5})$/.exec(value);
  if (!match || notZones.has(match[2]!)) return value;
  const [, time, abbreviation] = match as unknown as [string, string, string];
  if (abbreviation === 'Z' || abbreviation === 'UTC' || abbreviation === 'GMT') return value;
  const offset = Object.hasOwn(zoneAbbreviations, abbreviation) ? zoneAbbreviations[abbreviation] : 0;
  return `${time} ${utcOffset(offset ?? 0)}`;
}

// Words the real server's date parser passes over.
const skippedWords = new Set(['at', 'on', 'and', 'of', 't']);

interface DateFields {
  year?: number;
  month?: number;
  day?: number;
  hour?: number;
  minute?: number;
  second?: number;
  meridiem?: 'am' | 'pm';
  /** 0 for Monday */
  weekday?: number;
  offsetSeconds?: number;
}

// The names the real server's parser knows: the abbreviation or the whole name, nothing in between.
const monthByName = new Map(
  'january february march april may june july august september october november december'
    .split(' ')
    .flatMap((name, i) => [[name, i + 1], [name.slice(0, 3), i + 1]] as [string, number][])
    .concat([['sept', 9]]),
);
const weekdayByName = new Map(
  'monday tuesday wednesday thursday friday saturday sunday'.split(' ').flatMap((name, i) => [[name, i], [name.slice(0, 3), i]] as [string, number][]),
);

const monthOf = (word: string): number | undefined => monthByName.get(word.toLowerCase().replace(/\.$/, ''));
const weekdayOf = (word: string): number | undefined => weekdayByName.get(word.toLowerCase().replace(/\.$/, ''));

/** A two-digit year as the real server's parser reads it: the year within 50 years of now. */
function fullYear(twoDigits: number, now: Date): number {
  const century = Math.floor(now.getUTCFullYear() / 100) * 100;
  let year = century + twoDigits;
  if (year >= now.getUTCFullYear() + 50) year -= 100;
  else if (year < now.getUTCFullYear() - 50) year += 100;
  return year;
}

/** A month name ("Dec", "december") or a number written between date separators. */
function addDatePart(members: DateMembers, part: string): boolean {
  if (/^\d+$/.test(part)) return members.addWritten(part);
  const month = monthOf(part);
  return month !== undefined && members.addMonth(month);
}

/**
 * A date written with separators: "2024-02", "25/12/2024", "5-Jan-2024", "Jan-5", "25.12.2024" (a single dot
 * makes a decimal number instead). As in the real server's parser, the first two parts are a pair; a third
 * belongs to them only after the same separator, otherwise it is a number of its own.
 */
function addSeparatedDate(members: DateMembers, token: string): boolean {
  const dots = token.split('.').length - 1;
  const parts = token.split(/[/-]/).length > 1 ? token.split(/([/-])/) : dots > 1 ? token.split(/(\.)/) : [];
  // [part, separator, part] or [part, separator, part, separator, part]
  if (parts.length !== 3 && parts.length !== 5) return false;
  const [first, separator, second, secondSeparator, third] = parts as [string, string, string, string?, string?];
  const isNumber = (part: string): boolean => /^\d+$/.test(part);
  // After a month name come numbers only.
  const monthFirst = !isNumber(first);
  if (monthFirst && !isNumber(second)) return false;
  if (!addDatePart(members, first) || !addDatePart(members, second)) return false;
  if (third === undefined) return true;
  if (secondSeparator !== separator) return isNumber(third) && members.addNumber(Number(third));
  if (monthFirst && !isNumber(third)) return false;
  return addDatePart(members, third);
}

/** Reads the date words the real server's parser (dateutil) reads; undefined for what it would refuse. */
function dateFields(value: string, now: Date): DateFields | undefined {
  const fields: DateFields = {};
  const members = new DateMembers();
  // A zone written onto the time ("17:28:03+00:00", "10:30Z") is a word of its own.
  const spaced = value.replace(/(\d:\d{2}(?::\d{2}(?:\.\d+)?)?)([+-]\d{2}:?\d{2}|Z)(?=\s|,|$)/gi, '$1 $2');
  const tokens = spaced.split(/[\s,]+/).filter((token) => token !== '');
  const setHour = (hour: number, minute = 0, second = 0): boolean => {
    if (fields.hour !== undefined) return false;
    [fields.hour, fields.minute, fields.second] = [hour, minute, second];
    return true;
  };
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]!;
    const next = tokens[i + 1]?.toLowerCase();
    let m: RegExpExecArray | null;
    if ((m = /^(\d{1,2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?$/.exec(token))) {
      if (!setHour(Number(m[1]), Number(m[2]), Number(m[3] ?? 0))) return undefined;
    } else if ((m = /^([ap])\.?m\.?$/i.exec(token))) {
      fields.meridiem = m[1]!.toLowerCase() === 'a' ? 'am' : 'pm';
    } else if ((m = /^(GMT|UTC)?([+-])(\d{2}):?(\d{2})$/i.exec(token))) {
      // A zone comes after a time of day. "GMT+3" reads as POSIX zones do: 3 hours behind.
      if (fields.hour === undefined) return undefined;
      const sign = (m[2] === '-' ? -1 : 1) * (m[1] ? -1 : 1);
      fields.offsetSeconds = sign * (Number(m[3]) * 3600 + Number(m[4]) * 60);
    } else if (/^(?:UTC|GMT|Z)$/i.test(token)) {
      if (fields.hour === undefined) return undefined;
      fields.offsetSeconds = 0;
    } else if (/^(?:\d{8}|\d{12}|\d{14})$/.test(token)) {
      // YYYYMMDD, and a time of day (hhmm or hhmmss) after it.
      if (!members.addWritten(token.slice(0, 4)) || !members.addWritten(token.slice(4, 6)) || !members.addWritten(token.slice(6, 8))) return undefined;
      if (token.length > 8 && !setHour(Number(token.slice(8, 10)), Number(token.slice(10, 12)), Number(token.slice(12) || 0))) return undefined;
    } else if (/^\d{6}$/.test(token)) {
      // YYMMDD read like three numbers, or hhmmss once a date is known.
      if (members.length === 0) {
        for (const pair of [token.slice(0, 2), token.slice(2, 4), token.slice(4)]) members.addWritten(pair);
      } else if (!setHour(Number(token.slice(0, 2)), Number(token.slice(2, 4)), Number(token.slice(4)))) return undefined;
    } else if (/^\d+\.\d+$/.test(token) && [8, 12, 14].includes(token.length)) {
      // Read as YYYYMMDD[hhmm[ss]], which a decimal point breaks.
      return undefined;
    } else if (/^\d+\.\d+$/.test(token) && (token.length === 6 || token.indexOf('.') === 6)) {
      // Six characters with a decimal point are read as hhmmss[.ss]: only "hhmmss.s…" gets through.
      if (token.length === 6 || !setHour(Number(token.slice(0, 2)), Number(token.slice(2, 4)), Math.trunc(Number(token.slice(4))))) return undefined;
    } else if (/^\d+(?:\.\d+)?$/.test(token)) {
      const n = Number(token);
      if (members.length === 3 && (token.length === 2 || token.length === 4) && fields.hour === undefined) {
        // After a full date, hh or hhmm is the time of day.
        if (token.includes('.')) return undefined;
        setHour(Number(token.slice(0, 2)), Number(token.slice(2) || 0));
      } else if (next !== undefined && /^[ap]\.?m\.?$/.test(next)) {
        if (!setHour(Math.trunc(n))) return undefined;
      } else if (!members.addNumber(n)) return undefined;
    } else if (/[/.-]/.test(token) && /\d/.test(token)) {
      if (!addSeparatedDate(members, token)) return undefined;
    } else if (monthOf(token) !== undefined) {
      if (!members.addMonth(monthOf(token)!)) return undefined;
    } else if (/^[a-z]+[/-]/i.test(token)) {
      if (!addSeparatedDate(members, token)) return undefined;
    } else if (weekdayOf(token) !== undefined) {
      fields.weekday = weekdayOf(token);
    } else if (skippedWords.has(token.toLowerCase())) {
      continue;
    } else {
      return undefined;
    }
  }
  const date = members.resolve();
  if (!date) return undefined;
  // Words the parser passes over are not a date.
  if (members.length === 0 && fields.hour === undefined && fields.weekday === undefined) return undefined;
  const { year, month, day, centuryWritten } = date;
  if (year !== undefined) fields.year = year < 100 && !centuryWritten ? fullYear(year, now) : year;
  if (month !== undefined) fields.month = month;
  if (day !== undefined) fields.day = day;
  return fields;
}

/**
 * A date from its fields, the missing ones taken from today as the real server's parser does (its default is
 * today at midnight: "5 Dec" is this year's, "10:30" today's); a day past the month's end is its last day.
 */
function dateFromFields(fields: DateFields, now: Date): Date | undefined {
  const year = fields.year ?? now.getUTCFullYear();
  if (year < 1 || year > latestYear) return undefined;
  const month = fields.month ?? now.getUTCMonth() + 1;
  const lastDay = new Date(Date.UTC(year, month, 0)).getUTCDate();
  const day = fields.day ?? Math.min(now.getUTCDate(), lastDay);
  let hour = fields.hour ?? 0;
  if (fields.meridiem !== undefined) {
    if (hour < 1 || hour > 12) return undefined;
    hour = (hour % 12) + (fields.meridiem === 'pm' ? 12 : 0);
  }
  const minute = fields.minute ?? 0;
  const second = fields.second ?? 0;
  if (month < 1 || month > 12 || day < 1 || day > lastDay || hour > 23 || minute > 59 || second > 59) return undefined;
  let utc = Date.UTC(year, month - 1, day, hour, minute, second);
  // A weekday without a day means the next such day (today included).
  if (fields.weekday !== undefined && fields.day === undefined) {
    const weekday = (new Date(utc).getUTCDay() + 6) % 7;
    utc += ((fields.weekday - weekday + 7) % 7) * 86_400_000;
  }
  // Date.UTC reads years 0-99 as 1900-1999.
  const date = new Date(utc);
  date.setUTCFullYear(year);
  return new Date(date.getTime() - (fields.offsetSeconds ?? 0) * 1000);
}

/**
 * Parses Zulip's accepted forms: UNIX seconds, ISO 8601, and English dates like "Jun 5th 2017, 10:30PM" (UTC
 * unless said; missing fields from today, `now`).
 */
export function parseGlobalTime(input: string, now: Date = new Date()): Date | undefined {
  const value = input.trim();
  if (value === '') return undefined;
  let date: Date | undefined;
  if (/^\d{4}-\d{2}-\d{2}T/.test(value)) {
    date = new Date(/(?:Z|[+-]\d{2}:?\d{2})$/i.test(value) ? value : `${value}Z`);
  } else if (!/[<>*]/.test(value)) {
    const normalized = withZoneOffset(value.replace(/(\d)(st|nd|rd|th)\b/gi, '$1').replace(/(\d)\s*([ap]\.?m\.?)(?=\s|,|$)/gi, '$1 $2'));
    const fields = dateFields(normalized, now);
    if (fields) date = dateFromFields(fields, now);
  }
  // What the date parser refuses, the real server reads as UNIX seconds if it can.
  if (date === undefined && /^-?\d+(?:\.\d+)?$/.test(value)) date = new Date(Number(value) * 1000);
  if (date === undefined || Number.isNaN(date.getTime())) return undefined;
  const year = date.getUTCFullYear();
  if (year < 0 || year > latestYear) return undefined;
  return date;
}

export function renderGlobalTime(atom: string, now?: Date): MdNode[] {
  const body = atom.slice('<time:'.length, -1);
  const date = parseGlobalTime(body, now);
  if (!date) return [element('span', { className: ['timestamp-error'] }, [text(`Invalid time format: ${body}`)])];
  const datetime = date.toISOString().replace(/\.\d{3}Z$/, 'Z');
  return [element('time', { dateTime: datetime }, [text(body)])];
}
