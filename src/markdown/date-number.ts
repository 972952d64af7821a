// A number token of a written date ("2024", "30.5"), kept exact: its fraction is decimal digits, so that
// "10.1 h" is 10:06 as the real server reads it, not 10:05 as binary floating point would give.

export class DateNumber {
  private constructor(
    readonly whole: number,
    /** The digits after the decimal point ('' for none). */
    readonly fraction: string,
  ) {}

  /** The number a token stands for, or undefined when the token is not a number. */
  static of(token: string): DateNumber | undefined {
    if (!(token[0]! >= '0' && token[0]! <= '9')) return undefined;
    const match = /^(\d+)(?:\.(\d*))?$/.exec(token);
    return match ? new DateNumber(Number(match[1]), match[2] ?? '') : undefined;
  }

  get hasFraction(): boolean {
    return /[1-9]/.test(this.fraction);
  }

  isOver(limit: number): boolean {
    return this.whole > limit || (this.whole === limit && this.hasFraction);
  }

  /** The fraction's worth in sixtieths, rounded down (the minutes of a fractional hour). */
  sixtieths(): number {
    if (!this.hasFraction) return 0;
    return Number((60n * BigInt(this.fraction)) / 10n ** BigInt(this.fraction.length));
  }
}

/** Words Python reads as a number that is not finite: the date parser refuses them. */
export const isNotFinite = (token: string): boolean => /^(?:inf|infinity|nan)$/i.test(token);
