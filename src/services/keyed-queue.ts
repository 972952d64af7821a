/**
 * Runs tasks one at a time per key, in arrival order, within this process. For commands that
 * all touch one event stream: queued here they no longer race each other for its version (each
 * such race costs the loser a retry), and a crowd of them can no longer use up the command
 * runner's attempts. Other processes still race through optimistic concurrency, as before.
 */
export class KeyedQueue<K> {
  private readonly tails = new Map<K, Promise<unknown>>();

  run<T>(key: K, task: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    const result = previous.then(task, task);
    const tail = result.then(() => undefined, () => undefined);
    this.tails.set(key, tail);
    // The last one out removes the key, so idle keys hold no memory.
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return result;
  }
}
