import pg from 'pg';
import type { TestServer } from './server.js';

/**
 * Counts the statements the database receives from this process whose text `counts` accepts, on
 * either backend (PGlite's query, or every pg client's).
 */
export function statementCounter(s: TestServer, counts: (text: string) => boolean): { count(): number; restore(): void } {
  let count = 0;
  const seen = (text: unknown) => {
    if (typeof text === 'string' && counts(text)) count += 1;
  };
  const pglite = s.platform.database.pglite;
  if (pglite) {
    const original = pglite.query.bind(pglite);
    pglite.query = ((text: string, ...rest: unknown[]) => {
      seen(text);
      return (original as (...a: unknown[]) => unknown)(text, ...rest);
    }) as typeof pglite.query;
    return { count: () => count, restore: () => void (pglite.query = original) };
  }
  const prototype = pg.Client.prototype as unknown as { query: (...a: unknown[]) => unknown };
  const original = prototype.query;
  prototype.query = function (this: unknown, ...args: unknown[]) {
    const first = args[0];
    seen(typeof first === 'string' ? first : (first as { text?: string } | undefined)?.text);
    return original.apply(this, args);
  };
  return { count: () => count, restore: () => void (prototype.query = original) };
}
