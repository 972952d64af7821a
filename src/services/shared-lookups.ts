/** Requests one round trip serves at most. */
const MAX_SHARED = 256;

interface Waiter<I, R> {
  item: I;
  resolve(result: R): void;
  reject(error: unknown): void;
}

/**
 * One round trip for concurrent look-ups of the same key (sends to one channel, votes on one
 * message): the first goes at once; those that arrive while it is out wait for it, then share the
 * next one. `lookUp` (the lane's first caller's: every caller of a key asks the same) gets the
 * waiting requests' items in arrival order and answers each, in order. Per database (a process may
 * serve several, e.g. in tests), then per key.
 */
export class SharedLookups<K, I, R> {
  private readonly lanesByDb = new WeakMap<object, Map<K, Array<Waiter<I, R>>>>();

  get(db: object, key: K, item: I, lookUp: (items: I[]) => Promise<R[]>): Promise<R> {
    let lanes = this.lanesByDb.get(db);
    if (!lanes) this.lanesByDb.set(db, (lanes = new Map()));
    const existing = lanes.get(key);
    const waiting = existing ?? [];
    const answer = new Promise<R>((resolve, reject) => waiting.push({ item, resolve, reject }));
    if (!existing) {
      lanes.set(key, waiting);
      void serve(waiting, lookUp).finally(() => lanes.delete(key));
    }
    return answer;
  }
}

async function serve<I, R>(waiting: Array<Waiter<I, R>>, lookUp: (items: I[]) => Promise<R[]>): Promise<void> {
  while (waiting.length > 0) {
    const batch = waiting.splice(0, MAX_SHARED);
    try {
      const results = await lookUp(batch.map((w) => w.item));
      batch.forEach((waiter, i) => waiter.resolve(results[i]!));
    } catch (error) {
      for (const waiter of batch) waiter.reject(error);
    }
  }
}
