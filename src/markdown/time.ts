// Global times: `<time:…>` shows a moment in each reader's own time zone.
import type { MdNode } from './tree.js';
import { element, text } from './tree.js';

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

/** "GMT+0530" for 19800: a zone the built-in date parser reads. */
function gmtOffset(seconds: number): string {
  const minutes = Math.abs(seconds) / 60;
  const pad = (n: number): string => String(n).padStart(2, '0');
  return `GMT${seconds < 0 ? '-' : '+'}${pad(Math.floor(minutes / 60))}${pad(minutes % 60)}`;
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
  return `${time} ${gmtOffset(offset ?? 0)}`;
}

/** Parses Zulip's accepted forms: UNIX seconds, ISO 8601, and English dates like "Jun 5th 2017, 10:30PM" (UTC unless said). */
export function parseGlobalTime(input: string): Date | undefined {
  const value = input.trim();
  if (value === '') return undefined;
  let date: Date;
  if (/^-?\d+(?:\.\d+)?$/.test(value)) {
    date = new Date(Number(value) * 1000);
  } else {
    if (!/\d/.test(value) || /[<>*]/.test(value)) return undefined;
    let normalized = withZoneOffset(value.replace(/(\d)(st|nd|rd|th)\b/gi, '$1').replace(/(\d)\s*([ap]m)\b/gi, '$1 $2'));
    const hasZone = /(?:Z|[+-]\d{2}:?\d{2}|\b(?:UTC|GMT))$/i.test(normalized);
    if (!hasZone) normalized = /^\d{4}-\d{2}-\d{2}T/.test(normalized) ? `${normalized}Z` : `${normalized} UTC`;
    date = new Date(normalized);
  }
  const year = date.getUTCFullYear();
  if (Number.isNaN(date.getTime()) || year < 0 || year > latestYear) return undefined;
  return date;
}

export function renderGlobalTime(atom: string): MdNode[] {
  const body = atom.slice('<time:'.length, -1);
  const date = parseGlobalTime(body);
  if (!date) return [element('span', { className: ['timestamp-error'] }, [text(`Invalid time format: ${body}`)])];
  const datetime = date.toISOString().replace(/\.\d{3}Z$/, 'Z');
  return [element('time', { dateTime: datetime }, [text(body)])];
}
