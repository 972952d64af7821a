// Global times: `<time:…>` shows a moment in each reader's own time zone.
import type { MdNode } from './tree.js';
import { element, text } from './tree.js';
import { daysInMonth } from './date-members.js';
import { readDate, type DateReading } from './date-reader.js';
import { asciiDigits, trimDateSpace } from './date-tokens.js';

const latestYear = 9999;

// The time zone abbreviations the real server understands (seconds east of UTC). Several are ambiguous (IST,
// CST, BST); the real server settles each on one zone, and so must we, for both to agree on the moment.
export const zoneAbbreviations: Readonly<Record<string, number>> = {
  SST: -39600, HST: -36000, AKST: -32400, HDT: -32400, AKDT: -28800, PST: -28800, MST: -25200, PDT: -25200,
  CST: -21600, MDT: -21600, CDT: -18000, EST: -18000, AST: -14400, EDT: -14400, NST: -12600, ADT: -10800,
  NDT: -9000, GMT: 0, UTC: 0, WET: 0, BST: 3600, CET: 3600, MET: 3600, WAT: 3600, WEST: 3600, CAT: 7200,
  CEST: 7200, EET: 7200, MEST: 7200, SAST: 7200, EAT: 10800, EEST: 10800, IDT: 10800, MSK: 10800, PKT: 18000,
  IST: 19800, WIB: 25200, AWST: 28800, HKT: 28800, WITA: 28800, JST: 32400, KST: 32400, WIT: 32400,
  ACST: 34200, AEST: 36000, ACDT: 37800, AEDT: 39600, NZST: 43200, NZDT: 46800,
};

const dayMs = 86_400_000;

/**
 * The zone a reading names, in seconds east of UTC, as the real server settles it: a name from its table
 * wins over any number; then UTC (the server's own zone) or a written offset; a name it does not know, or
 * none, leaves the time in UTC.
 */
function zoneSeconds(reading: DateReading): number {
  const { zoneName, zoneOffset } = reading;
  if (zoneName !== undefined && Object.hasOwn(zoneAbbreviations, zoneName)) return zoneAbbreviations[zoneName]!;
  if (zoneName === 'UTC') return 0;
  return zoneOffset ?? 0;
}

/**
 * The moment a reading stands for, the missing fields taken from today as the real server's parser does (its
 * default is today at midnight: "5 Dec" is this year's, "10:30" today's); a day past the month's end is the
 * month's last day. A weekday without a day moves to the next such day (today included).
 */
function momentOf(reading: DateReading, now: Date): GlobalTime | undefined {
  const year = reading.year ?? now.getUTCFullYear();
  const month = reading.month ?? now.getUTCMonth() + 1;
  if (month < 1 || month > 12) return undefined;
  const lastDay = daysInMonth(year, month);
  const day = reading.day ?? Math.min(now.getUTCDate(), lastDay);
  const { hour = 0, minute = 0, second = 0, microsecond = 0 } = reading;
  if (year < 1 || year > latestYear || day < 1 || day > lastDay || hour > 23 || minute > 59 || second > 59) return undefined;
  const date = new Date(0);
  // setUTCFullYear, unlike Date.UTC, keeps years 0-99 as written.
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, Math.floor(microsecond / 1000));
  if (reading.weekday !== undefined && !reading.day) {
    const weekday = (date.getUTCDay() + 6) % 7;
    date.setTime(date.getTime() + ((reading.weekday - weekday + 7) % 7) * dayMs);
    if (date.getUTCFullYear() > latestYear) return undefined;
  }
  const offset = zoneSeconds(reading);
  // The server cannot convert a zone a day or more away from UTC.
  if (Math.abs(offset) >= 86_400) return undefined;
  return { date: new Date(date.getTime() - offset * 1000), microsecond };
}

// What Python's float() reads (the real server's fallback to UNIX seconds), finite values only.
const pythonFloat = /^[+-]?(?:\d(?:_?\d)*(?:\.(?:\d(?:_?\d)*)?)?|\.\d(?:_?\d)*)(?:[eE][+-]?\d(?:_?\d)*)?$/;

/** A moment to the microsecond: `date` holds it to the millisecond, `microsecond` is its microsecond of the second. */
interface GlobalTime {
  date: Date;
  microsecond: number;
}

/** Python rounds halves to even (its `round` and the datetime module's float conversions). */
function roundHalfEven(value: number): number {
  const rounded = Math.round(value);
  return Math.abs(value % 1) === 0.5 && rounded % 2 !== 0 ? rounded - 1 : rounded;
}

/** UNIX seconds as Python's datetime.fromtimestamp reads a float: whole seconds, then microseconds rounded half to even. */
function fromUnixSeconds(seconds: number): GlobalTime {
  let whole = Math.trunc(seconds);
  let microsecond = roundHalfEven((seconds - whole) * 1e6);
  if (microsecond >= 1e6) {
    microsecond -= 1e6;
    whole += 1;
  } else if (microsecond < 0) {
    microsecond += 1e6;
    whole -= 1;
  }
  return { date: new Date(whole * 1000 + Math.floor(microsecond / 1000)), microsecond };
}

function readGlobalTime(input: string, now: Date): GlobalTime | undefined {
  const reading = readDate(input, now.getUTCFullYear());
  let moment = reading && momentOf(reading, now);
  // What the date parser refuses, the real server reads as UNIX seconds if it can.
  const seconds = asciiDigits(trimDateSpace(input));
  if (moment === undefined && pythonFloat.test(seconds)) moment = fromUnixSeconds(Number(seconds.replaceAll('_', '')));
  if (moment === undefined || Number.isNaN(moment.date.getTime())) return undefined;
  const year = moment.date.getUTCFullYear();
  if (year < 1 || year > latestYear) return undefined;
  return moment;
}

/**
 * Parses `<time:…>` bodies as the real server does: its date parser first (ISO 8601, English dates like "Jun
 * 5th 2017, 10:30PM", zone names and offsets; UTC unless said; missing fields from today, `now`), then UNIX
 * seconds.
 */
export function parseGlobalTime(input: string, now: Date = new Date()): Date | undefined {
  return readGlobalTime(input, now)?.date;
}

/** The `datetime` the real server writes for a body (Python's isoformat in UTC: microseconds only when there are some), or undefined for an invalid time. */
export function globalTimeAttribute(input: string, now: Date = new Date()): string | undefined {
  const moment = readGlobalTime(input, now);
  if (!moment) return undefined;
  const fraction = moment.microsecond === 0 ? '' : `.${String(moment.microsecond).padStart(6, '0')}`;
  return `${moment.date.toISOString().slice(0, -'.000Z'.length)}${fraction}Z`;
}

export function renderGlobalTime(atom: string, now?: Date): MdNode[] {
  const body = atom.slice('<time:'.length, -1);
  const datetime = globalTimeAttribute(body, now);
  if (!datetime) return [element('span', { className: ['timestamp-error'] }, [text(`Invalid time format: ${body}`)])];
  return [element('time', { dateTime: datetime }, [text(body)])];
}
