// micromark's EditMap.consume (micromark-util-edit-map 1.0.0) rebuilds the whole event list on every call,
// untouched prefix included. micromark's document tokenizer calls it each time a nested container closes while
// flow is open ("- a\n  - b\n" repeated), with edits near the end of a list that grows with the document: the
// parse went quadratic (800 repetitions took seconds). This replaces consume with one that keeps the prefix
// before the first edit in place and rebuilds only the suffix, with the same result.
import { EditMap } from 'micromark-util-edit-map';

type Change = [at: number, remove: number, add: unknown[]];
interface EditMapInternals {
  map: Change[];
  index: Map<number, Change>;
}

function consumeSuffix(this: EditMapInternals, events: unknown[]): void {
  const map = this.map;
  if (map.length === 0) return;
  map.sort((a, b) => a[0] - b[0]);
  const first = map[0]![0];
  const tail = events.slice(first);
  const end = first + tail.length;
  events.length = first;
  let cursor = first;
  for (const [at, remove, add] of map) {
    // As in the original, an edit that starts inside an earlier one's removal copies nothing before it.
    for (let i = cursor; i < at; i++) events.push(i < end ? tail[i - first] : undefined);
    for (const event of add) events.push(event);
    cursor = at + remove;
  }
  for (let i = cursor; i < end; i++) events.push(tail[i - first]);
  map.length = 0;
  this.index.clear();
}

(EditMap.prototype as unknown as { consume: typeof consumeSuffix }).consume = consumeSuffix;
