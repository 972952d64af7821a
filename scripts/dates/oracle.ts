// Runs python-dateutil (the real server's date parser) over `<time:…>` bodies and compares its readings
// with ours.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { globalTimeAttribute, zoneAbbreviations } from '../../src/markdown/time.js';

/** Today for both sides: dateutil's default day and our `now`. */
export const comparisonNow = new Date('2026-11-26T15:51:00Z');

/** Whether python3 with python-dateutil can run here. */
export function dateutilAvailable(): boolean {
  return spawnSync('python3', ['-c', 'import dateutil.parser'], { stdio: 'ignore' }).status === 0;
}

/** The server's reading of each body: its ISO datetime (UTC, with microseconds), or null for an invalid time. */
export function dateutilReadings(bodies: string[]): (string | null)[] {
  const day = comparisonNow.toISOString().slice(0, 10);
  const oracle = spawnSync(
    'python3',
    [fileURLToPath(new URL('./dateutil-oracle.py', import.meta.url)), JSON.stringify(zoneAbbreviations), `${day}T00:00:00`],
    { input: bodies.map((body) => JSON.stringify(body)).join('\n') + '\n', encoding: 'utf8', maxBuffer: 1 << 28 },
  );
  if (oracle.status !== 0) throw new Error(`dateutil oracle failed: ${oracle.stderr}`);
  return oracle.stdout.trim().split('\n').map((line) => JSON.parse(line) as string | null);
}

export interface Difference {
  body: string;
  dateutil: string | null;
  ours: string | null;
}

export function readingDifferences(bodies: string[]): Difference[] {
  const expected = dateutilReadings(bodies);
  return bodies.flatMap((body, i) => {
    const ours = globalTimeAttribute(body, comparisonNow) ?? null;
    const dateutil = expected[i] ?? null;
    return dateutil === ours ? [] : [{ body, dateutil, ours }];
  });
}
