// `~~` strikethrough, paired as Zulip pairs it. GFM's resolver splices its event list once per pair, which made
// a paragraph of thousands of pairs cost time quadratic in its length (so messages past 1,000 tildes in one
// paragraph were refused); the resolver here gives the same events in one pass, so any number of pairs costs
// linear time.
import { gfmStrikethrough } from 'micromark-extension-gfm-strikethrough';
import { resolveAll } from 'micromark-util-resolve-all';
import type { Construct, Event, Extension, Resolver, Token } from 'micromark-util-types';

const TEMPORARY = 'strikethroughSequenceTemporary';

/**
 * Zulip pairs `~~` runs the way its pattern `~~([^~\n]+?)~~` reads, not by GFM's flanking rules: a run of exactly
 * two tildes opens, and the next such run closes it when the text between is not empty and holds no tilde or
 * line break (so `~~ like software ~~` is struck through). The flags set here tell GFM's resolver which runs pair.
 */
function pairLikeZulip(resolver: Resolver): Resolver {
  return (events, context) => {
    let opener: Token | undefined;
    for (const [kind, token] of events) {
      if (kind !== 'enter' || token.type !== TEMPORARY) continue;
      token._open = false;
      token._close = false;
      if (token.end.offset - token.start.offset !== 2) {
        opener = undefined;
        continue;
      }
      if (opener) {
        const between = context.sliceSerialize({ start: opener.end, end: token.start });
        if (between !== '' && !/[~\n\r]/.test(between)) {
          opener._open = true;
          token._close = true;
          opener = undefined;
          continue;
        }
      }
      opener = token;
    }
    return resolver(events, context);
  };
}

/** The [opener's exit, closer's enter] event indexes of each pair, in order; undefined when pairs would nest. */
function flatPairs(events: Event[]): [number, number][] | undefined {
  const pairs: [number, number][] = [];
  let open: number | undefined;
  for (let index = 0; index < events.length; index++) {
    const [kind, token] = events[index]!;
    if (token.type !== TEMPORARY) continue;
    if (kind === 'enter' && token._close && open !== undefined) {
      const opener = events[open]![1];
      if (opener.end.offset - opener.start.offset !== token.end.offset - token.start.offset) return undefined;
      pairs.push([open, index]);
      open = undefined;
    } else if (kind === 'exit' && token._open) {
      // An opener inside another one would nest (GFM's back-scan pairs those; Zulip's pairing never makes them).
      if (open !== undefined) return undefined;
      open = index;
    }
  }
  return pairs;
}

/**
 * GFM's strikethrough resolution without its splice per pair: each pair becomes a strikethrough around a
 * strikethroughText holding the events between (resolved with the constructs inside spans, as GFM does), and
 * unpaired runs become data.
 */
function resolveInOnePass(gfmResolver: Resolver): Resolver {
  return (events, context) => {
    const pairs = flatPairs(events);
    if (!pairs) return gfmResolver(events, context);
    const insideSpan = context.parser.constructs.insideSpan.null;
    const out: Event[] = [];
    let copied = 0;
    for (const [open, close] of pairs) {
      // open - 1 enters the opening sequence, close + 1 exits the closing one.
      for (let index = copied; index < open - 1; index++) out.push(events[index]!);
      copied = close + 2;
      const opening = events[open]![1];
      const closing = events[close]![1];
      opening.type = 'strikethroughSequence';
      closing.type = 'strikethroughSequence';
      const strikethrough: Token = { type: 'strikethrough', start: { ...opening.start }, end: { ...closing.end } };
      const text: Token = { type: 'strikethroughText', start: { ...opening.end }, end: { ...closing.start } };
      out.push(['enter', strikethrough, context], ['enter', opening, context], ['exit', opening, context], ['enter', text, context]);
      const inner = events.slice(open + 1, close);
      for (const event of insideSpan ? resolveAll(insideSpan, inner, context) : inner) out.push(event);
      out.push(['exit', text, context], ['enter', closing, context], ['exit', closing, context], ['exit', strikethrough, context]);
    }
    for (let index = copied; index < events.length; index++) out.push(events[index]!);
    for (const [, token] of out) if (token.type === TEMPORARY) token.type = 'data';
    // In place: micromark holds on to the array it passed (subtokenize reads a tokenizer's events by reference).
    events.length = out.length;
    for (let index = 0; index < out.length; index++) events[index] = out[index]!;
    return events;
  };
}

function strikethroughExtension(resolve: (gfmResolver: Resolver) => Resolver): Extension {
  const plain = gfmStrikethrough({ singleTilde: false });
  const gfm = (plain.text as Record<number, Construct>)[126]!;
  if (!gfm.resolveAll) throw new Error('GFM strikethrough has no resolveAll');
  const tilde: Construct = { ...gfm, name: 'zulipStrikethrough', resolveAll: pairLikeZulip(resolve(gfm.resolveAll)) };
  return { text: { 126: tilde }, insideSpan: { null: [tilde] }, attentionMarkers: plain.attentionMarkers };
}

/** GFM `~~strikethrough~~` (double tilde only, paired as in Zulip), resolved in linear time. */
export const zulipStrikethrough = (): Extension => strikethroughExtension(resolveInOnePass);

/** The same with GFM's own resolver: what the one-pass resolver must equal (for tests). */
export const zulipStrikethroughWithGfmResolver = (): Extension => strikethroughExtension((gfmResolver) => gfmResolver);
