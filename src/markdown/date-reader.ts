// Reads the tokens of a written date into its fields, by the rules of the real server's date parser
// (python-dateutil's default parser: month first, year not first, not fuzzy). Each token is read by the first
// rule that takes it: a number, a weekday, a month name, am/pm, a zone name, a numeric zone, or a word passed
// over; any other token makes the whole text unreadable. Several rules look at the tokens around theirs and
// take them too ("10:30", "Jan-05", "Jan of 24", "+05:30 (IST)").

import { DateMembers, Unreadable, digitsValue } from './date-members.js';
import { DateNumber, isNotFinite } from './date-number.js';
import { dateTokens, isDigitWord } from './date-tokens.js';

export interface DateReading {
  year?: number;
  month?: number;
  day?: number;
  /** 0 for Monday */
  weekday?: number;
  hour?: number;
  minute?: number;
  second?: number;
  microsecond?: number;
  /** An upper-case word read as the zone ("IST", "UTC"); what it means is for the caller. */
  zoneName?: string;
  /** Seconds east of UTC, when written as a number ("+05:30"). */
  zoneOffset?: number;
}

const wordTable = (groups: string[][]): Map<string, number> =>
  new Map(groups.flatMap((names, i) => names.map((name) => [name, i] as [string, number])));

const weekdays = wordTable([
  ['mon', 'monday'], ['tue', 'tuesday'], ['wed', 'wednesday'], ['thu', 'thursday'], ['fri', 'friday'],
  ['sat', 'saturday'], ['sun', 'sunday'],
]);
const months = wordTable([
  ['jan', 'january'], ['feb', 'february'], ['mar', 'march'], ['apr', 'april'], ['may'], ['jun', 'june'],
  ['jul', 'july'], ['aug', 'august'], ['sep', 'sept', 'september'], ['oct', 'october'], ['nov', 'november'],
  ['dec', 'december'],
]);
/** 0 hours, 1 minutes, 2 seconds */
const timeUnits = wordTable([['h', 'hour', 'hours'], ['m', 'minute', 'minutes'], ['s', 'second', 'seconds']]);
const meridiems = wordTable([['am', 'a'], ['pm', 'p']]);
// Tokens passed over: separators, filler words, the "m" of "a.m." and the "t" of ISO dates, ordinal endings.
const passedOver = new Set([' ', '.', ',', ';', '-', '/', "'", 'at', 'on', 'and', 'ad', 'm', 't', 'of', 'st', 'nd', 'rd', 'th']);

const lookUp = (table: Map<string, number>, token: string | undefined): number | undefined =>
  token === undefined ? undefined : table.get(token.toLowerCase());
const isTimeUnit = (token: string | undefined): boolean => lookUp(timeUnits, token) !== undefined;
const isPassedOver = (token: string | undefined): boolean => token !== undefined && passedOver.has(token.toLowerCase());
const isUtcName = (token: string): boolean => /^(?:utc|gmt|z)$/i.test(token);

/** A two-digit year as the real server's parser reads it: the year within 50 years of `currentYear`. */
export function fullYear(twoDigits: number, currentYear: number): number {
  let year = Math.floor(currentYear / 100) * 100 + twoDigits;
  if (year >= currentYear + 50) year -= 100;
  else if (year < currentYear - 50) year += 100;
  return year;
}

/** 12 am is hour 0; 1 pm to 11 pm are 13 to 23. */
const withMeridiem = (hour: number, pm: boolean): number => (hour < 12 && pm ? hour + 12 : hour === 12 && !pm ? 0 : hour);

/** Whole seconds and microseconds of "45" or "45.123". */
function secondsOf(token: string | undefined): [number, number] {
  const parts = (token ?? '').split('.');
  if (parts.length === 1) return [digitsValue(parts[0]), 0];
  if (parts.length !== 2) throw new Unreadable(`not seconds: ${token}`);
  return [digitsValue(parts[0]), digitsValue(parts[1]!.padEnd(6, '0').slice(0, 6))];
}

class TokenReader {
  private readonly fields: DateReading = {};
  private readonly members = new DateMembers();

  constructor(
    private readonly tokens: string[],
    private readonly currentYear: number,
  ) {}

  /** The token at `at`; unreadable past the end, where a rule expected one. */
  private at(at: number): string {
    const token = this.tokens[at];
    if (token === undefined) throw new Unreadable('text ends too soon');
    return token;
  }

  read(): DateReading {
    const { tokens, fields } = this;
    for (let i = 0; i < tokens.length; i++) {
      const token = tokens[i]!;
      // Spaces are passed over whatever comes before them.
      if (token === ' ') continue;
      const number = DateNumber.of(token);
      let named: number | undefined;
      if (number !== undefined) i = this.readNumber(i, number);
      else if (isNotFinite(token)) throw new Unreadable('not a finite number');
      else if ((named = lookUp(weekdays, token)) !== undefined) fields.weekday = named;
      else if ((named = lookUp(months, token)) !== undefined) i = this.readMonthName(i, named);
      else if ((named = lookUp(meridiems, token)) !== undefined) this.applyMeridiem(named === 1);
      else if (this.couldBeZoneName(token)) this.readZoneName(i);
      else if (fields.hour !== undefined && (token === '+' || token === '-')) i = this.readOffset(i);
      else if (!isPassedOver(token)) throw new Unreadable(`unknown word: ${token}`);
    }
    return this.finish();
  }

  private finish(): DateReading {
    const { fields } = this;
    const { year, month, day, centuryWritten } = this.members.resolve();
    if (year !== undefined) fields.year = year < 100 && !centuryWritten ? fullYear(year, this.currentYear) : year;
    if (month !== undefined) fields.month = month;
    if (day !== undefined) fields.day = day;
    // A zone of offset 0 is UTC, whatever its name; "UTC", "GMT" and "Z" are offset 0 whatever the number.
    if ((fields.zoneOffset === 0 && !fields.zoneName) || fields.zoneName === 'Z' || fields.zoneName === 'z') {
      [fields.zoneName, fields.zoneOffset] = ['UTC', 0];
    } else if (fields.zoneOffset !== 0 && fields.zoneName && isUtcName(fields.zoneName)) {
      fields.zoneOffset = 0;
    }
    const anyField = [year, month, day, fields.weekday, fields.hour, fields.minute, fields.second, fields.microsecond];
    if (anyField.every((value) => value === undefined)) throw new Unreadable('no date in the text');
    return fields;
  }

  /** A number: by its length, its neighbours and what is already known. Returns the last token it took. */
  private readNumber(i: number, value: DateNumber): number {
    const { tokens, fields, members } = this;
    const token = tokens[i]!;
    const next = tokens[i + 1];
    const length = token.length;
    if (members.length === 3 && (length === 2 || length === 4) && fields.hour === undefined && next !== ':' && lookUp(timeUnits, next) === undefined) {
      // After a full date, hh or hhmm is the time of day ("19990101T2359").
      fields.hour = digitsValue(token.slice(0, 2));
      if (length === 4) fields.minute = digitsValue(token.slice(2));
      return i;
    }
    if (length === 6 || (length > 6 && token.indexOf('.') === 6)) {
      // YYMMDD before any date, otherwise hhmmss[.ffffff].
      if (members.length === 0 && !token.includes('.')) {
        for (const pair of [token.slice(0, 2), token.slice(2, 4), token.slice(4)]) members.addWritten(pair);
      } else {
        fields.hour = digitsValue(token.slice(0, 2));
        fields.minute = digitsValue(token.slice(2, 4));
        [fields.second, fields.microsecond] = secondsOf(token.slice(4));
      }
      return i;
    }
    if (length === 8 || length === 12 || length === 14) {
      // YYYYMMDD[hhmm[ss]]
      for (const part of [token.slice(0, 4), token.slice(4, 6), token.slice(6, 8)]) members.addWritten(part);
      if (length > 8) {
        fields.hour = digitsValue(token.slice(8, 10));
        fields.minute = digitsValue(token.slice(10, 12));
        if (length > 12) fields.second = digitsValue(token.slice(12));
      }
      return i;
    }
    const unitAt = this.timeUnitFor(i);
    if (unitAt !== undefined) {
      // "10h", "10 h", "30" in "10h30" (the unit after the one before it)
      const unit = lookUp(timeUnits, tokens[unitAt])! + (unitAt > i ? 0 : 1);
      this.applyTimeUnit(unit, value, token);
      return Math.max(i, unitAt);
    }
    if (next === ':' && i + 2 < tokens.length) {
      // hh:mm[:ss[.ffffff]]; a fractional minute gives the seconds, and no seconds clears them.
      fields.hour = value.whole;
      this.applyMinutes(DateNumber.of(tokens[i + 2]!));
      if (i + 4 < tokens.length && tokens[i + 3] === ':') {
        [fields.second, fields.microsecond] = secondsOf(tokens[i + 4]);
        return i + 4;
      }
      return i + 2;
    }
    if (next === '-' || next === '/' || next === '.') return this.readSeparatedDate(i);
    if (next === undefined || isPassedOver(next)) {
      const meridiem = lookUp(meridiems, tokens[i + 2]);
      if (meridiem !== undefined) {
        // "5 pm": any hour is taken as it is.
        fields.hour = withMeridiem(value.whole, meridiem === 1);
        return i + 2;
      }
      members.addNumber(value);
      return i + 1;
    }
    const meridiem = lookUp(meridiems, next);
    if (meridiem !== undefined && value.whole < 24) {
      fields.hour = withMeridiem(value.whole, meridiem === 1);
      return i + 1;
    }
    if (members.couldBeDay(value)) {
      members.addNumber(value);
      return i;
    }
    throw new Unreadable(`a number that is no part of a date: ${token}`);
  }

  /** Where the unit word of the number at `i` is: just after it (a space between allowed), or just before. */
  private timeUnitFor(i: number): number | undefined {
    const { tokens } = this;
    if (isTimeUnit(tokens[i + 1])) return i + 1;
    if (tokens[i + 1] === ' ' && isTimeUnit(tokens[i + 2])) return i + 2;
    if (i > 0 && isTimeUnit(tokens[i - 1])) return i - 1;
    // Looking back over a space only from the last token.
    if (i > 1 && i === tokens.length - 1 && tokens[i - 1] === ' ' && isTimeUnit(tokens[i - 2])) return i - 2;
    return undefined;
  }

  private applyTimeUnit(unit: number, value: DateNumber, token: string): void {
    const { fields } = this;
    if (unit === 0) {
      fields.hour = value.whole;
      if (value.hasFraction) fields.minute = value.sixtieths();
    } else if (unit === 1) {
      this.applyMinutes(value);
    } else if (unit === 2) {
      [fields.second, fields.microsecond] = secondsOf(token);
    }
  }

  private applyMinutes(value: DateNumber | undefined): void {
    if (value === undefined) throw new Unreadable('no minutes');
    this.fields.minute = value.whole;
    this.fields.second = value.hasFraction ? value.sixtieths() : undefined;
  }

  /** "01-01[-01]", "01/Jan[/01]", "20.09.2009": up to three date parts joined by one separator. */
  private readSeparatedDate(i: number): number {
    const { tokens, members } = this;
    const separator = tokens[i + 1];
    members.addWritten(tokens[i]);
    if (i + 2 >= tokens.length || isPassedOver(tokens[i + 2])) return i + 1;
    const second = tokens[i + 2]!;
    if (isDigitWord(second)) members.addWritten(second);
    else this.addMonthName(second);
    if (i + 3 < tokens.length && tokens[i + 3] === separator) {
      const third = this.at(i + 4);
      if (lookUp(months, third) !== undefined) this.addMonthName(third);
      else members.addWritten(third);
      return i + 4;
    }
    return i + 2;
  }

  private addMonthName(token: string): void {
    const month = lookUp(months, token);
    if (month === undefined) throw new Unreadable(`not a month: ${token}`);
    this.members.addMonth(month + 1);
  }

  /** "Jan", "Jan-05[-99]", "Jan of 24" (then 24 is the year). */
  private readMonthName(i: number, month: number): number {
    const { tokens, members } = this;
    members.addMonth(month + 1);
    const next = tokens[i + 1];
    if (next === '-' || next === '/') {
      members.addWritten(this.at(i + 2));
      if (tokens[i + 3] === next) {
        members.addWritten(this.at(i + 4));
        return i + 4;
      }
      return i + 2;
    }
    if (next === ' ' && tokens[i + 3] === ' ' && tokens[i + 2]?.toLowerCase() === 'of' && i + 4 < tokens.length) {
      const year = tokens[i + 4]!;
      if (isDigitWord(year)) {
        const value = digitsValue(year);
        members.addYear(value < 100 ? fullYear(value, this.currentYear) : value);
      }
      return i + 4;
    }
    return i;
  }

  private applyMeridiem(pm: boolean): void {
    const { hour } = this.fields;
    if (hour === undefined) throw new Unreadable('am or pm without an hour');
    if (hour > 12) throw new Unreadable('am or pm after hour 12');
    this.fields.hour = withMeridiem(hour, pm);
  }

  /** An upper-case word of up to five letters after the time, while no zone is known (but for the offset it names). */
  private couldBeZoneName(token: string, afterOffset = false): boolean {
    const { hour, zoneName, zoneOffset } = this.fields;
    if (hour === undefined || zoneName !== undefined || (zoneOffset !== undefined && !afterOffset)) return false;
    return token.length <= 5 && (/^[A-Z]+$/.test(token) || token === 'z');
  }

  /** "IST"; in "GMT+3" the number says how far the zone is behind, so its sign is turned around. */
  private readZoneName(i: number): void {
    const { tokens, fields } = this;
    const token = tokens[i]!;
    fields.zoneName = token;
    fields.zoneOffset = token === 'z' ? 0 : undefined;
    const next = tokens[i + 1];
    if (next === '+' || next === '-') {
      tokens[i + 1] = next === '+' ? '-' : '+';
      fields.zoneOffset = undefined;
      if (isUtcName(token)) fields.zoneName = undefined;
    }
  }

  /** "+0530", "+05:30", "+5", optionally followed by the zone's name in brackets: "-0300 (BRST)". */
  private readOffset(i: number): number {
    const { tokens, fields } = this;
    const sign = tokens[i] === '+' ? 1 : -1;
    const digits = this.at(i + 1);
    let hours: number;
    let minutes = 0;
    if (digits.length === 4) {
      [hours, minutes] = [digitsValue(digits.slice(0, 2)), digitsValue(digits.slice(2))];
    } else if (tokens[i + 2] === ':') {
      [hours, minutes] = [digitsValue(digits), digitsValue(this.at(i + 3))];
      i += 2;
    } else if (digits.length <= 2) {
      hours = digitsValue(digits);
    } else {
      throw new Unreadable(`not a zone offset: ${digits}`);
    }
    fields.zoneOffset = sign * (hours * 3600 + minutes * 60);
    const name = tokens[i + 4];
    if (isPassedOver(tokens[i + 2]) && tokens[i + 3] === '(' && tokens[i + 5] === ')' && name !== undefined && name.length >= 3 && this.couldBeZoneName(name, true)) {
      fields.zoneName = name;
      return i + 5;
    }
    return i + 1;
  }
}

/** The fields of a written date, or undefined for what the real server's parser refuses. */
export function readDate(text: string, currentYear: number): DateReading | undefined {
  try {
    return new TokenReader(dateTokens(text), currentYear).read();
  } catch (error) {
    if (error instanceof Unreadable) return undefined;
    throw error;
  }
}
