import type { FoldMemory } from './projections-api.js';

const DELETED = Symbol('deleted');

/**
 * A projection's FoldMemory as the projection runner keeps it: what committed passes left, and
 * what the pass under way wrote, kept only if that pass commits. Folds keep a few facts per
 * channel or user in it, never one per message: it lives as long as the process.
 */
export class PassMemory implements FoldMemory {
  private readonly kept = new Map<string, unknown>();
  private readonly pending = new Map<string, unknown>();

  get(key: string): unknown {
    if (!this.pending.has(key)) return this.kept.get(key);
    const value = this.pending.get(key);
    return value === DELETED ? undefined : value;
  }

  set(key: string, value: unknown): void {
    this.pending.set(key, value);
  }

  delete(key: string): void {
    this.pending.set(key, DELETED);
  }

  /** The pass committed. */
  keep(): void {
    for (const [key, value] of this.pending) {
      if (value === DELETED) this.kept.delete(key);
      else this.kept.set(key, value);
    }
    this.pending.clear();
  }

  /** The pass did not commit. */
  drop(): void {
    this.pending.clear();
  }

  /** The read tables may have changed by other hands: nothing remembered holds any more. */
  forget(): void {
    this.kept.clear();
    this.pending.clear();
  }
}
