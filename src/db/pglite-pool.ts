import type { PGlite } from '@electric-sql/pglite';

/**
 * Presents one PGlite instance as the small part of pg.Pool that kysely's PostgresDialect uses.
 * PGlite is a single connection, so a connection is a turn on a mutex: a transaction holds it
 * from BEGIN to COMMIT and other callers wait for their turn.
 */
export class PGlitePool {
  private tail: Promise<void> = Promise.resolve();

  /** `finish` runs at end() instead of closing the instance (in-memory instances are reused: src/db/memory-instances.ts). */
  constructor(
    readonly pglite: PGlite,
    private readonly finish: (pglite: PGlite) => Promise<void> = (instance) => instance.close(),
  ) {}

  async connect(): Promise<PGliteClient> {
    let release!: () => void;
    const turn = new Promise<void>((resolve) => (release = resolve));
    const previous = this.tail;
    this.tail = previous.then(() => turn);
    await previous;
    // PGlite answers within microtasks; yielding here lets timers and I/O run between turns, so a
    // busy embedded server cannot starve its own event loop.
    await new Promise((resolve) => setImmediate(resolve));
    return new PGliteClient(this.pglite, release);
  }

  async end(): Promise<void> {
    await this.tail;
    await this.finish(this.pglite);
  }
}

class PGliteClient {
  private released = false;
  constructor(
    private readonly pglite: PGlite,
    private readonly releaseTurn: () => void,
  ) {}

  async query(sql: string | { text: string; values?: unknown[] }, values?: unknown[]) {
    const text = typeof sql === 'string' ? sql : sql.text;
    const params = (typeof sql === 'string' ? values : sql.values) ?? [];
    const result = await this.pglite.query(text, params as unknown[]);
    const command = text.trimStart().split(/\s/, 1)[0]!.toUpperCase();
    return { rows: result.rows, rowCount: result.affectedRows ?? result.rows.length, command };
  }

  release(): void {
    if (this.released) return;
    this.released = true;
    this.releaseTurn();
  }
}
