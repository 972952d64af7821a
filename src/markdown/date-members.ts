// Which numbers of a written date are its year, month and day, decided as the real server's date parser
// (dateutil, month first, year not first) decides: from the numbers in the order written, those known to be a
// year (more than two digits written, or a value over 100) or a month (a month name), and their sizes.

import { DateNumber } from './date-number.js';

export type MemberLabel = 'year' | 'month';

export interface YearMonthDay {
  year?: number;
  month?: number;
  day?: number;
  /** Whether the year was written with its century (otherwise a year under 100 is within 50 years of now). */
  centuryWritten: boolean;
}

/** Thrown when the numbers cannot make a date; the whole text is then not a date. */
export class Unreadable extends Error {}

/** A token's digits as an integer; anything else is unreadable. */
export function digitsValue(token: string | undefined): number {
  if (token === undefined || !/^\d+$/.test(token)) throw new Unreadable(`not a whole number: ${token}`);
  return Number(token);
}

export function daysInMonth(year: number, month: number): number {
  if (month < 1 || month > 12) throw new Unreadable(`no month ${month}`);
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  return month === 2 ? (leap ? 29 : 28) : [4, 6, 9, 11].includes(month) ? 30 : 31;
}

export class DateMembers {
  private readonly values: number[] = [];
  private yearAt: number | undefined;
  private monthAt: number | undefined;
  private centuryWritten = false;

  get length(): number {
    return this.values.length;
  }

  /**
   * Adds a token written between date separators ("2024" in "2024-02"): more than two digits make it the
   * year. Unreadable when it is not digits, or a second year.
   */
  addWritten(token: string | undefined): void {
    const value = digitsValue(token);
    const isYear = token!.length > 2;
    if (isYear) this.centuryWritten = true;
    this.add(value, isYear ? 'year' : undefined);
  }

  /** Adds a number standing alone (its whole part): a value over 100 is the year. */
  addNumber(value: DateNumber): void {
    const isYear = value.isOver(100);
    if (isYear) this.centuryWritten = true;
    this.add(value.whole, isYear ? 'year' : undefined);
  }

  /** Adds a month given by name; unreadable when a month is already set. */
  addMonth(month: number): void {
    this.add(month, 'month');
  }

  /** Adds a year written in full ("Jan of 2020", or a two-digit one already placed in its century). */
  addYear(year: number): void {
    this.centuryWritten = true;
    this.add(year, 'year');
  }

  /** Whether a number could still be the day: 1 to the last day of the month when the month is known. */
  couldBeDay(value: DateNumber): boolean {
    if (value.whole < 1) return false;
    if (this.monthAt === undefined) return !value.isOver(31);
    // Without a year, February may have 29 days.
    const year = this.yearAt === undefined ? 2000 : this.values[this.yearAt]!;
    return !value.isOver(daysInMonth(year, this.values[this.monthAt]!));
  }

  private add(value: number, label: MemberLabel | undefined): void {
    // A fourth number can never be read, so there is no need to read on.
    if (this.values.length === 3) throw new Unreadable('more than three date numbers');
    if (label === 'year' && this.yearAt !== undefined) throw new Unreadable('a second year');
    if (label === 'month' && this.monthAt !== undefined) throw new Unreadable('a second month');
    this.values.push(value);
    if (label === 'year') this.yearAt = this.values.length - 1;
    if (label === 'month') this.monthAt = this.values.length - 1;
  }

  /** The year, month and day the numbers stand for; unreadable when there are more than three. */
  resolve(): YearMonthDay {
    const v = this.values;
    const out: YearMonthDay = { centuryWritten: this.centuryWritten };
    const known = (this.yearAt !== undefined ? 1 : 0) + (this.monthAt !== undefined ? 1 : 0);
    // Every number labelled, or all but one of three: the labels say it all.
    if ((v.length > 0 && v.length === known) || (v.length === 3 && known === 2)) {
      const rest = [0, 1, 2].find((i) => i !== this.yearAt && i !== this.monthAt);
      if (this.yearAt !== undefined) out.year = v[this.yearAt];
      if (this.monthAt !== undefined) out.month = v[this.monthAt];
      if (v.length === 3 && rest !== undefined) {
        if (this.yearAt === undefined) out.year = v[rest];
        else if (this.monthAt === undefined) out.month = v[rest];
        else out.day = v[rest];
      }
      return out;
    }
    if (v.length > 3) throw new Unreadable('more than three date numbers');
    if (v.length === 0) return out;
    if (v.length === 1 || (this.monthAt !== undefined && v.length === 2)) {
      // One number (a day, or a year when it cannot be a day), or two with a month name.
      let other = v[0]!;
      if (this.monthAt !== undefined) {
        out.month = v[this.monthAt];
        other = v[this.monthAt === 0 ? 1 : 0]!;
      }
      if (other > 31) out.year = other;
      else out.day = other;
      return out;
    }
    const [a, b, c] = v as [number, number, number];
    if (v.length === 2) {
      // Month first; a number that cannot be a day is the year. "25/12" is month 25, which fails later.
      if (a > 31) [out.year, out.month] = [a, b];
      else if (b > 31) [out.month, out.year] = [a, b];
      else [out.month, out.day] = [a, b];
      return out;
    }
    if (this.monthAt === 0) {
      if (b > 31) [out.month, out.year, out.day] = [a, b, c];
      else [out.month, out.day, out.year] = [a, b, c];
    } else if (this.monthAt === 1) {
      if (a > 31) [out.year, out.month, out.day] = [a, b, c];
      else [out.day, out.month, out.year] = [a, b, c];
    } else if (this.monthAt === 2) {
      if (b > 31) [out.day, out.year, out.month] = [a, b, c];
      else [out.year, out.day, out.month] = [a, b, c];
    } else if (a > 31 || this.yearAt === 0) {
      [out.year, out.month, out.day] = [a, b, c];
    } else if (a > 12) {
      // Only with three numbers does a first number that cannot be a month make it the day.
      [out.day, out.month, out.year] = [a, b, c];
    } else {
      [out.month, out.day, out.year] = [a, b, c];
    }
    return out;
  }
}
