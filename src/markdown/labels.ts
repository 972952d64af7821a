// micromark's link and image constructs, with the text their unmatched brackets leave behind merged.
//
// micromark merges adjacent `data` events in a text chunk in the text initializer's resolver, which runs before
// any construct's: the label resolver, which runs later, turns every `[`, `![` or `]` that opened or closed
// nothing into `data` of its own. A paragraph of brackets ("[][][]…") so kept one `data` event per bracket, all
// landing in one text node, and mdast-util-from-markdown's compile allocates a context and points for each (over
// half the rendering time of "[][]…" or "[[[…" at 10,000 characters). Here the label resolver is core's followed
// by the same merge. One event for a run of adjacent data gives the same text node: from-markdown appends adjacent
// data to one node, from the first's start to the last's end, and adjacent tokens are contiguous in the source.
import { labelEnd, labelStartImage, labelStartLink } from 'micromark-core-commonmark';
import type { Construct, Event, Extension, Resolver } from 'micromark-util-types';

const codes = { exclamationMark: 33, leftBracket: 91, rightBracket: 93 } as const;

const isData = (events: Event[], index: number): boolean => {
  const event = events[index];
  return event !== undefined && event[0] === 'enter' && event[1].type === 'data' && events[index + 1]?.[1] === event[1];
};

/**
 * Merges each run of adjacent `data` enter/exit pairs into its first pair, in one pass (micromark's own merge
 * splices once per run: quadratic on a paragraph of many runs, such as brackets between code spans).
 */
export function mergeAdjacentData(events: Event[]): Event[] {
  let write = 0;
  let read = 0;
  while (read < events.length) {
    if (!isData(events, read)) {
      events[write++] = events[read++]!;
      continue;
    }
    const first = events[read]![1];
    events[write++] = events[read]!;
    events[write++] = events[read + 1]!;
    read += 2;
    while (isData(events, read)) {
      first.end = events[read]![1].end;
      read += 2;
    }
  }
  events.length = write;
  return events;
}

const resolveLabels: Resolver = (events, context) => mergeAdjacentData(labelEnd.resolveAll!(events, context));

// New names: micromark's `disable` drops constructs by name, core's and extensions' alike.
const link: Construct = { ...labelStartLink, name: 'zulipLabelStartLink', resolveAll: resolveLabels };
const image: Construct = { ...labelStartImage, name: 'zulipLabelStartImage', resolveAll: resolveLabels };
const end: Construct = { ...labelEnd, name: 'zulipLabelEnd', resolveAll: resolveLabels };

/**
 * Replaces core's three label constructs. All three share the one resolver so that micromark, which calls each
 * distinct `resolveAll` once per text chunk, resolves labels once, as with core's.
 */
export const mergedLabels: Extension = {
  disable: { null: ['labelStartLink', 'labelStartImage', 'labelEnd'] },
  text: { [codes.leftBracket]: link, [codes.exclamationMark]: image, [codes.rightBracket]: end },
};
