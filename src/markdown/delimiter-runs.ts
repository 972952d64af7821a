// micromark matches `~~` delimiter runs by splicing its event list once per match, so a paragraph made
// of thousands of runs costs time quadratic in its length. These wrappers count the runs of each text chunk
// (paragraph, heading, cell, link label) before matching and refuse the message past a bound no real message
// comes near, which keeps that cost linear in the message.
import { gfmStrikethrough } from 'micromark-extension-gfm-strikethrough';
import type { Construct, Extension, Resolver, Token } from 'micromark-util-types';
import { MarkdownRenderingError } from './limits.js';

/** Delimiter characters one text chunk may hold (each match uses at least one, and costs a splice). */
export const MAX_DELIMITERS = 1_000;

function bounded(resolver: Resolver, sequenceType: string): Resolver {
  return (events, context) => {
    let delimiters = 0;
    for (const [kind, token] of events) {
      if (kind !== 'enter' || token.type !== sequenceType) continue;
      delimiters += token.end.offset - token.start.offset;
      if (delimiters > MAX_DELIMITERS) throw new MarkdownRenderingError();
    }
    return resolver(events, context);
  };
}

function boundedConstruct(construct: Construct, name: string, sequenceType: string): Construct {
  if (!construct.resolveAll) throw new Error(`${construct.name ?? 'construct'} has no resolveAll`);
  return { ...construct, name, resolveAll: bounded(construct.resolveAll, sequenceType) };
}

/**
 * Zulip pairs `~~` runs the way its pattern `~~([^~\n]+?)~~` reads, not by GFM's flanking rules: a run of exactly
 * two tildes opens, and the next such run closes it when the text between is not empty and holds no tilde or
 * line break (so `~~ like software ~~` is struck through). The flags set here tell GFM's resolver which runs pair.
 */
function pairLikeZulip(resolver: Resolver): Resolver {
  return (events, context) => {
    let opener: Token | undefined;
    for (const [kind, token] of events) {
      if (kind !== 'enter' || token.type !== 'strikethroughSequenceTemporary') continue;
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

/** GFM `~~strikethrough~~` (double tilde only, paired as in Zulip), bounded. */
export function boundedStrikethrough(): Extension {
  const plain = gfmStrikethrough({ singleTilde: false });
  const gfm = (plain.text as Record<number, Construct>)[126]!;
  const tilde = boundedConstruct({ ...gfm, resolveAll: pairLikeZulip(gfm.resolveAll!) }, 'zulipStrikethrough', 'strikethroughSequenceTemporary');
  return { text: { 126: tilde }, insideSpan: { null: [tilde] }, attentionMarkers: plain.attentionMarkers };
}
