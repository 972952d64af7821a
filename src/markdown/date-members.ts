// Which numbers of a written date are its year, month and day, decided as the real server's date parser
// (dateutil, month first, year not first) decides: from the numbers in the order written, those known to be a
// year (more than two digits) or a month (a month name), and their sizes.

export type MemberLabel = 'year' | 'month';

export interface YearMonthDay {
  year?: number;
  month?: number;
  day?: number;
  /** Whether the year was written with its century (otherwise a year under 100 is within 50 years of now). */
  centuryWritten: boolean;
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
   * Adds a number as written between separators ("2024" in "2024-02"): more than two digits make it the year.
   * False when it cannot be added (a second year).
   */
  addWritten(digits: string): boolean {
    const isYear = digits.length > 2;
    if (isYear) this.centuryWritten = true;
    return this.add(Number(digits), isYear ? 'year' : undefined);
  }

  /** Adds a number standing alone: a value over 100 is the year. */
  addNumber(value: number): boolean {
    const isYear = value > 100;
    if (isYear) this.centuryWritten = true;
    return this.add(Math.trunc(value), isYear ? 'year' : undefined);
  }

  /** Adds a month given by name; false when a month is already set. */
  addMonth(month: number): boolean {
    return this.add(month, 'month');
  }

  private add(value: number, label: MemberLabel | undefined): boolean {
    if (label === 'year' && this.yearAt !== undefined) return false;
    if (label === 'month' && this.monthAt !== undefined) return false;
    this.values.push(value);
    if (label === 'year') this.yearAt = this.values.length - 1;
    if (label === 'month') this.monthAt = this.values.length - 1;
    return true;
  }

  /** The year, month and day the numbers stand for; undefined when they cannot be read (more than three). */
  resolve(): YearMonthDay | undefined {
    const v = this.values;
    const out: YearMonthDay = { centuryWritten: this.centuryWritten };
    const known = (this.yearAt !== undefined ? 1 : 0) + (this.monthAt !== undefined ? 1 : 0);
    if (v.length > 3) return undefined;
    if (v.length === 0) return out;
    // Every number labelled, or all but one of three: the labels say it all.
    if (v.length === known || (v.length === 3 && known === 2)) {
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
    if (v.length === 1 || (this.monthAt !== undefined && v.length === 2)) {
      // One number (a day, or a year when it cannot be a day), or two with a month name.
      let other = v[0]!;
      if (this.monthAt !== undefined) {
        out.month = v[this.monthAt];
        if (v.length === 1) return out;
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
