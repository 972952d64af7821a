// `<time:…>` bodies read as the real server reads them (python-dateutil 2.9's parser, with the server's zone
// abbreviations and UNIX seconds as the fallback). Expected values are dateutil's own, written here as data
// (scripts/dates/compare.ts produces them), with today 2026-11-26 filling what is missing; null is the
// server's "Invalid time format" error.
import t from 'tap';
import { renderMarkdown } from '../../../src/markdown/index.js';
import { parseGlobalTime } from '../../../src/markdown/time.js';
import { dateTokens } from '../../../src/markdown/date-tokens.js';
import { testContext } from './fixtures.js';

const now = new Date('2026-11-26T15:51:00Z');

const cases: [string, string | null][] = [
  // tokens: dotted runs split at their dots unless a plain decimal number; a decimal comma after two digits
  ["Sep.20.2009", "2009-09-20T00:00:00Z"],
  ["20.09.2009 10:30", "2009-09-20T10:30:00Z"],
  ["10:30:45,5", "2026-11-26T10:30:45.500000Z"],
  ["5:30 a.m.", "2026-11-26T05:30:00Z"],
  ["5:30 p.m", "2026-11-26T17:30:00Z"],
  ["5T,.8..", "2026-05-08T00:00:00Z"],
  ["53.", "2053-11-26T00:00:00Z"],
  ["./8", "2026-11-08T00:00:00Z"],
  [".50", "2050-11-26T00:00:00Z"],
  ["2a2-2", "2026-02-02T02:00:00Z"],
  // a later time of day replaces an earlier one
  ["10:30 11:45", "2026-11-26T11:45:00Z"],
  ["12am, 5pm", "2026-11-26T17:00:00Z"],
  ["10:30.5 10 h 30 m", "2026-11-26T10:30:00Z"],
  ["10:30:45.123 z 5:30 a.m. at .", "2026-11-26T05:30:00.123000Z"],
  ["2024-03-05 9:5", "2024-03-05T09:05:00Z"],
  // a leading or stray '-' or '/' is passed over
  ["-99-01-02", "1999-01-02T00:00:00Z"],
  ["- -5", "2026-11-05T00:00:00Z"],
  ["-13 pm, 5 Jan", "2026-01-05T13:00:00Z"],
  ["-11 on Jan-5", "2005-01-11T00:00:00Z"],
  ["6/", "2026-11-06T00:00:00Z"],
  ["-7-T", "2026-11-07T00:00:00Z"],
  ["m-3782", "3782-11-26T00:00:00Z"],
  // hours, minutes and seconds by unit words, fractions included
  ["10h30m15s", "2026-11-26T10:30:15Z"],
  ["10.25 h", "2026-11-26T10:15:00Z"],
  ["10.1 h", "2026-11-26T10:06:00Z"],
  ["12h04", "2026-11-26T12:04:00Z"],
  ["55s m", "2026-11-26T00:00:55Z"],
  ["T1S5", "2026-11-26T00:00:01Z"],
  ["3M1", "2026-11-26T00:03:01Z"],
  ["1.5m", "2026-11-26T00:01:30Z"],
  // numbers by length: hhmmss after a date, YYMMDD before, hh/hhmm after three date parts
  ["2024-03-05 103045", "2024-03-05T10:30:45Z"],
  ["103045 AT", "2045-10-30T00:00:00Z"],
  ["103045.5 IST", "2026-11-26T05:00:45.500000Z"],
  ["20240305T1030", "2024-03-05T10:30:00Z"],
  ["20240305 10", "2024-03-05T10:00:00Z"],
  ["100T10:30:45.123", "0100-11-26T10:30:45.123000Z"],
  ["164/", "0164-11-26T00:00:00Z"],
  // a number before am/pm: taken as it is when a space is between, up to 23 when joined
  ["13 pm", "2026-11-26T13:00:00Z"],
  ["13 pm PDT", "2026-11-26T20:00:00Z"],
  ["0am", "2026-11-26T00:00:00Z"],
  ["9P", "2026-11-26T21:00:00Z"],
  ["7 a", "2026-11-26T07:00:00Z"],
  ["10h0am", "2026-11-26T10:00:00Z"],
  ["13pm", "2026-11-26T13:00:00Z"],
  // zone names: only after the time, upper case, up to five letters, the server's table first
  ["IST 10:30", null],
  ["10:30 IST", "2026-11-26T05:00:00Z"],
  ["10:30 +0530 IST", null],
  ["10:30 IST +0100", "2026-11-26T05:00:00Z"],
  ["10:30 XYZ", "2026-11-26T10:30:00Z"],
  ["10:30 on PDT on 101", "0101-11-26T17:30:00Z"],
  ["7 a AT", "2026-11-26T07:00:00Z"],
  ["T10:30 Z", "2026-11-26T10:30:00Z"],
  ["9:5 z", "2026-11-26T09:05:00Z"],
  ["10:30 utc", null],
  // numeric zones: +hh, +hhmm, +hh:mm, a bracketed name, GMT+3 read POSIX-style
  ["10:30:45 +3", "2026-11-26T07:30:45Z"],
  ["10:30 -11", "2026-11-26T21:30:00Z"],
  ["T10:30 +0530", "2026-11-26T05:00:00Z"],
  ["12:00 am GMT+3", "2026-11-26T03:00:00Z"],
  ["12am UTC-2", "2026-11-25T22:00:00Z"],
  ["5 pm EST-2", "2026-11-26T22:00:00Z"],
  ["10:30 IST+1", "2026-11-26T05:00:00Z"],
  ["10:30 +05:30 (IST)", "2026-11-26T05:00:00Z"],
  ["10:30 -0800 (PST)", "2026-11-26T18:30:00Z"],
  ["10:30 +0530 (XYZ)", "2026-11-26T05:00:00Z"],
  ["10:30 +99:99", null],
  ["10:30 -2359", "2026-11-27T10:29:00Z"],
  ["10:30 +2400", null],
  ["45s -03:00", "2026-11-26T03:00:00Z"],
  ["+4", "1970-01-01T00:00:04Z"],
  // month of year: the number after "of" is the year
  ["Jan of 24", "2024-01-26T00:00:00Z"],
  ["Jan of 24 10:30:45.123", "2024-01-26T10:30:45.123000Z"],
  ["Feb of 5 10:30", "2005-02-26T10:30:00Z"],
  ["March of 2020", "2020-03-26T00:00:00Z"],
  ["2nd of March", "2026-03-02T00:00:00Z"],
  ["Jan of 1999 5", "1999-01-05T00:00:00Z"],
  // weekdays without a day move to the next such day
  ["Monday 10am", "2026-11-30T10:00:00Z"],
  ["-sunday 45s", "2026-11-29T00:00:45Z"],
  ["AT ;  Monday at 99", "1999-11-29T00:00:00Z"],
  // UNIX seconds as Python's float() reads them
  ["1e5", "1970-01-02T03:46:40Z"],
  ["1_700_000_000", "2023-11-14T22:13:20Z"],
  [" 42 ", "2042-11-26T00:00:00Z"],
  ["-1700000000", "1916-02-18T01:46:40Z"],
  ["1234567890123", null],
  ["١٢:٣٠", "2026-11-26T12:30:00Z"],
];

/** dateutil's microseconds cut to the milliseconds a Date holds. */
const toMilliseconds = (iso: string | null): string | null =>
  iso === null ? null : iso.replace(/(\.\d{3})\d*Z$/, '$1Z').replace(/:(\d{2})Z$/, ':$1.000Z');

t.test('each body reads as dateutil reads it', async (t) => {
  for (const [body, expected] of cases) {
    t.equal(parseGlobalTime(body, now)?.toISOString() ?? null, toMilliseconds(expected), JSON.stringify(body));
  }
});

t.test('tokens split as dateutil splits them', async (t) => {
  t.same(dateTokens('Sep.20.2009'), ['Sep', '.', '20', '.', '2009']);
  t.same(dateTokens('4:30:21.447'), ['4', ':', '30', ':', '21.447']);
  t.same(dateTokens('10:30:45,5'), ['10', ':', '30', ':', '45.5']);
  t.same(dateTokens('5,5'), ['5', ',', '5']);
  t.same(dateTokens('a.m. 12.'), ['a', '.', 'm', '.', ' ', '12', '.']);
  t.same(dateTokens('5.a'), ['5.a']);
  t.same(dateTokens('5.a '), ['5', '.', 'a', ' ']);
  t.same(dateTokens('10:30+05:30\t(IST)'), ['10', ':', '30', '+', '05', ':', '30', ' ', '(', 'IST', ')']);
});

t.test('the rendered element keeps the body as text and the moment in UTC', async (t) => {
  const html = (body: string): string => renderMarkdown(`<time:${body}>`, testContext({ now })).html;
  t.equal(html('10:30 +05:30 (IST)'), '<p><time datetime="2026-11-26T05:00:00Z">10:30 +05:30 (IST)</time></p>');
  t.equal(html('IST 10:30'), '<p><span class="timestamp-error">Invalid time format: IST 10:30</span></p>');
});
