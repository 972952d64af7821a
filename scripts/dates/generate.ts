// Date-like inputs for comparing readers: fragments people write (dates, times, zones, words, numbers) in
// every order and in unusual mixes, drawn with a fixed seed so that runs compare the same inputs.

const dates = [
  '2024-03-05', '05/03/2024', '5.3.2024', '3/5', '25/12', '2024-02', '12/2024', '02-99', '99-01-02', '2024/25/12',
  'Jan 5', '5 Jan', 'January 5th 2024', 'Dec 45', 'Jan-5', '5-Jan-2024', 'Jan-05-99', 'Sep.20.2009', '20240305',
  '240305', 'Jan of 24', 'March of 2020', 'Feb of 5', 'May 31', 'Feb 30', '2024', '31', '7', '12', '99', '2024-13',
  'Jun 5th 2017', '31st', '2nd of March', 'Sept 3', 'oct', 'JUN', '1.2', '3.4.5', '12.25', '2024.03.05', '1999-12',
  '5/Jan/2024', '5-Jan', 'Jan/5/2024', '2024-Jan-05', '05-2024-Jan', 'Jan 2024 5', '5 2024 Jan',
];
const times = [
  '10:30', '10:30:45', '10:30:45.123', '23:59:59.9999999', '5pm', '5 pm', '5:30 a.m.', '5:30 p.m', '12am', '12 am',
  '13pm', '0am', '13 pm', '10h', '10h30', '10 h 30 m', '10h30m15s', '1030', '103045', '103045.5', '10.5h', '10.25 h',
  '30m', '45s', '1.5m', 'T10:30', '10:30PM', '24:00', '10:61', '9:5', '10:30.5', '7 a', '7 p', '10:', '10:30:',
  '12:00 am', '12:00 pm', '1234.5', '12.5:30',
];
const zones = [
  'UTC', 'GMT', 'Z', 'z', 'utc', 'IST', 'EST', 'PDT', 'XYZ', 'T', 'AT', '+0530', '-03:00', '+3', '-11', 'GMT+3',
  'UTC-2', 'EST-2', 'IST+1', '+05:30 (IST)', '-0800 (PST)', '+99:99', '+123', '+0530 (XYZ)', '+', '-', '(IST)',
];
const words = ['Monday', 'Tue', 'sunday', 'at', 'on', 'and', 'of', 'the', 'a', 'AD', 'm', 'st', 'T', ',', '-', '/', "'", ';', '.'];
const numbers = [
  '1700000000', '1700000000.5', '-1700000000', '1e5', '-5', '.5', '1_000', '1234567890123', '0', '100', '101',
  '1000', '12345', '1234567', '123456789', '12345678901', '1234567890123456', ' 42 ', 'inf', 'nan',
];
const joiners = [' ', ' ', ' ', ', ', '', 'T', ' at ', ' of ', '-', '/', '  ', ' on '];
const pools = [dates, dates, times, times, zones, words, numbers];

function seeded(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** `count` inputs: every fragment alone and each date with each time and zone, then random mixes. */
export function generatedDateInputs(count: number, seed = 19): string[] {
  const out = new Set<string>([...dates, ...times, ...zones, ...numbers]);
  for (const date of dates) for (const time of times.slice(0, 12)) out.add(`${date} ${time}`);
  for (const time of times) for (const zone of zones) out.add(`${time} ${zone}`);
  const random = seeded(seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
  // Character soup, for how runs of letters, digits, dots and commas split into tokens.
  const soup = '0123456789012345 ::--//..,,++()TZzamphsAPMofJanIST\t\u00a0';
  while (out.size < count * 0.8) {
    const length = 1 + Math.floor(random() * 14);
    let text = '';
    for (let i = 0; i < length; i++) text += pick([...soup]);
    out.add(text);
  }
  while (out.size < count) {
    const parts = 1 + Math.floor(random() * 4);
    let text = random() < 0.08 ? '-' : '';
    for (let i = 0; i < parts; i++) text += (i > 0 ? pick(joiners) : '') + pick(pick(pools));
    out.add(text);
  }
  return [...out].slice(0, count);
}
