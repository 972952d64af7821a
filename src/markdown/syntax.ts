// micromark and mdast-util-from-markdown extensions for Zulip's dialect of Markdown.
//
// Zulip differs from CommonMark in ways best handled while tokenizing:
// - raw HTML, `<autolinks>`, reference definitions and setext headings do not exist (the text stays text);
// - `_` never makes emphasis (snake_case stays intact), and `*` emphasis is not CommonMark's: micromark's is
//   switched off and emphasis.ts applies the real server's patterns to the text;
// - a code fence starts at a line's first character, and its opening line must be a fence, an optional language and an optional header without
//   fence characters (so "``` one ```" is inline code and "~~~~x: y~~~~" is a paragraph);
// - mentions (`@**Name**`, `@_*group*`), channel links (`#**channel>topic**`), inline math (`$$x$$`) and
//   global times (`<time:…>`) are atoms that Markdown inside them must not break apart.
import { codeFenced } from 'micromark-core-commonmark';
import type { Code, Construct, Effects, Extension, State, TokenizeContext } from 'micromark-util-types';
import type { CompileContext, Extension as FromMarkdownExtension, Token } from 'mdast-util-from-markdown';
import type { Literal } from 'mdast';

declare module 'micromark-util-types' {
  interface TokenTypeMap {
    zulipAtom: 'zulipAtom';
    zulipFenceCheck: 'zulipFenceCheck';
  }
}

/** A Zulip inline atom as written (e.g. "@**King Hamlet**"), resolved later against the realm's data. */
export interface ZulipAtom extends Literal {
  type: 'zulipAtom';
}

declare module 'mdast' {
  interface PhrasingContentMap {
    zulipAtom: ZulipAtom;
  }
  interface RootContentMap {
    zulipAtom: ZulipAtom;
  }
}

const codes = {
  tab: 9,
  lf: 10,
  cr: 13,
  space: 32,
  quote: 34,
  hash: 35,
  dollar: 36,
  apostrophe: 39,
  leftParen: 40,
  asterisk: 42,
  slash: 47,
  colon: 58,
  lessThan: 60,
  greaterThan: 62,
  at: 64,
  leftBracket: 91,
  underscore: 95,
  backtick: 96,
  leftBrace: 123,
  tilde: 126,
} as const;

const isLineEnd = (code: Code): boolean => code === null || code === codes.lf || code === codes.cr || code < -2;
const isSpace = (code: Code): boolean => code === codes.space || code === codes.tab || code === -1 || code === -2;

// Mentions must follow whitespace, an opening bracket or quote, a slash or "<" (so e-mail addresses stay text).
function mayPrecedeMention(this: TokenizeContext, code: Code): boolean {
  return (
    code === null ||
    isLineEnd(code) ||
    isSpace(code) ||
    code === -3 ||
    code === -4 ||
    code === -5 ||
    ([codes.apostrophe, codes.quote, codes.leftParen, codes.leftBrace, codes.leftBracket, codes.slash, codes.lessThan] as number[]).includes(code) ||
    (code > 127 && /\s/u.test(String.fromCodePoint(code)))
  );
}

/** `@**Name**`, `@_**Name**`, `@*group*`, `@_*group*` */
const mention: Construct = {
  name: 'zulipMention',
  previous: mayPrecedeMention,
  tokenize(effects: Effects, ok: State, nok: State): State {
    let stars = 0;
    let body = 0;
    return start;
    function start(code: Code): State | undefined {
      effects.enter('zulipAtom');
      effects.consume(code);
      return afterAt;
    }
    function afterAt(code: Code): State | undefined {
      if (code === codes.underscore) {
        effects.consume(code);
        return openStars;
      }
      return openStars(code);
    }
    function openStars(code: Code): State | undefined {
      if (code === codes.asterisk && stars < 2) {
        stars++;
        effects.consume(code);
        return openStars;
      }
      return stars === 0 ? nok(code) : inside(code);
    }
    function inside(code: Code): State | undefined {
      if (isLineEnd(code)) return nok(code);
      if (code === codes.asterisk) return body === 0 ? nok(code) : close(stars)(code);
      body++;
      effects.consume(code);
      return inside;
    }
    function close(remaining: number) {
      return function closing(code: Code): State | undefined {
        if (remaining === 0) {
          effects.exit('zulipAtom');
          return ok(code);
        }
        if (code !== codes.asterisk) return nok(code);
        effects.consume(code);
        return close(remaining - 1);
      };
    }
  },
};

/** `#**channel**`, `#**channel>topic**`, `#**channel>topic@123**` */
const channelLink: Construct = {
  name: 'zulipChannelLink',
  tokenize(effects: Effects, ok: State, nok: State): State {
    let body = 0;
    let stars = 0;
    return start;
    function start(code: Code): State | undefined {
      effects.enter('zulipAtom');
      effects.consume(code);
      return openStars;
    }
    function openStars(code: Code): State | undefined {
      if (code !== codes.asterisk) return nok(code);
      effects.consume(code);
      return ++stars === 2 ? inside : openStars;
    }
    function inside(code: Code): State | undefined {
      if (isLineEnd(code)) return nok(code);
      if (code === codes.asterisk) return body === 0 ? nok(code) : closeFirst(code);
      body++;
      effects.consume(code);
      return inside;
    }
    function closeFirst(code: Code): State | undefined {
      effects.consume(code);
      return closeSecond;
    }
    function closeSecond(code: Code): State | undefined {
      if (code !== codes.asterisk) return nok(code);
      effects.consume(code);
      effects.exit('zulipAtom');
      return ok;
    }
  },
};

/** `$$…$$` inline TeX: the body may not start with `_` or `$` (so "$$_$$" is a smiley), nor run on to a third `$`. */
const inlineMath: Construct = {
  name: 'zulipInlineMath',
  previous(code: Code): boolean {
    return code !== codes.dollar;
  },
  tokenize(effects: Effects, ok: State, nok: State): State {
    return start;
    function start(code: Code): State | undefined {
      effects.enter('zulipAtom');
      effects.consume(code);
      return secondDollar;
    }
    function secondDollar(code: Code): State | undefined {
      if (code !== codes.dollar) return nok(code);
      effects.consume(code);
      return first;
    }
    function first(code: Code): State | undefined {
      if (isLineEnd(code) || code === codes.underscore || code === codes.dollar) return nok(code);
      return inside(code);
    }
    function inside(code: Code): State | undefined {
      if (isLineEnd(code)) return nok(code);
      if (code === codes.dollar) {
        effects.consume(code);
        return closing;
      }
      effects.consume(code);
      return code === 92 ? escaped : inside;
    }
    function escaped(code: Code): State | undefined {
      if (isLineEnd(code)) return nok(code);
      effects.consume(code);
      return inside;
    }
    function closing(code: Code): State | undefined {
      if (code !== codes.dollar) return nok(code);
      effects.consume(code);
      return after;
    }
    function after(code: Code): State | undefined {
      if (code === codes.dollar) return nok(code);
      effects.exit('zulipAtom');
      return ok(code);
    }
  },
};

/** Longest `<time:…>` body: far beyond any timestamp or date the real server parses. */
const MAX_TIME_LENGTH = 100;

/** `<time:…>` */
const globalTime: Construct = {
  name: 'zulipTime',
  tokenize(effects: Effects, ok: State, nok: State): State {
    const keyword = 'time:';
    let index = 0;
    let length = 0;
    return start;
    function start(code: Code): State | undefined {
      effects.enter('zulipAtom');
      effects.consume(code);
      return word;
    }
    function word(code: Code): State | undefined {
      if (index === keyword.length) return inside(code);
      if (code !== keyword.charCodeAt(index)) return nok(code);
      index++;
      effects.consume(code);
      return word;
    }
    function inside(code: Code): State | undefined {
      // Bounded so that a line of unclosed "<time:" costs linear time, not a scan to the line's end per try.
      if (isLineEnd(code) || ++length > MAX_TIME_LENGTH) return nok(code);
      effects.consume(code);
      if (code === codes.greaterThan) {
        effects.exit('zulipAtom');
        return ok;
      }
      return inside;
    }
  },
};

/** A run of underscores is plain text. */
const literalUnderscores: Construct = {
  name: 'zulipLiteralUnderscores',
  tokenize(effects: Effects, ok: State): State {
    return start;
    function start(code: Code): State | undefined {
      effects.enter('data');
      effects.consume(code);
      return more;
    }
    function more(code: Code): State | undefined {
      if (code === codes.underscore) {
        effects.consume(code);
        return more;
      }
      effects.exit('data');
      return ok(code);
    }
  },
};

/** Looks ahead over a fence's opening line: fence, spaces, an optional language, then no fence characters. */
const zulipFenceLine: Construct = {
  partial: true,
  tokenize(effects: Effects, ok: State, nok: State): State {
    let marker: Code = null;
    let size = 0;
    return start;
    function start(code: Code): State | undefined {
      marker = code;
      effects.enter('zulipFenceCheck');
      return sequence(code);
    }
    function sequence(code: Code): State | undefined {
      if (code === marker) {
        size++;
        effects.consume(code);
        return sequence;
      }
      return size < 3 ? nok(code) : rest(code);
    }
    function rest(code: Code): State | undefined {
      if (isLineEnd(code)) {
        effects.exit('zulipFenceCheck');
        return ok(code);
      }
      if (code === codes.backtick || code === codes.tilde) return nok(code);
      effects.consume(code);
      return rest;
    }
  },
};

const zulipCodeFenced: Construct = {
  name: 'zulipCodeFenced',
  concrete: true,
  tokenize(this: TokenizeContext, effects: Effects, ok: State, nok: State): State {
    // The real server finds fences in the message's lines before any other syntax, and only at a line's first
    // character: an indented fence, or one after a quote's ">" or in a list item, is no fence.
    if (this.now().column !== 1) return nok;
    const fenced = codeFenced.tokenize.call(this, effects, ok, nok);
    return (code: Code) => effects.check(zulipFenceLine, fenced, nok)(code);
  },
};

export const zulipMicromark: Extension = {
  disable: { null: ['htmlFlow', 'htmlText', 'autolink', 'definition', 'setextUnderline', 'codeFenced', 'attention', 'characterEscape', 'hardBreakEscape'] },
  flow: { [codes.backtick]: zulipCodeFenced, [codes.tilde]: zulipCodeFenced },
  text: {
    [codes.at]: mention,
    [codes.hash]: channelLink,
    [codes.dollar]: inlineMath,
    [codes.lessThan]: globalTime,
    [codes.underscore]: literalUnderscores,
  },
};

export const zulipFromMarkdown: FromMarkdownExtension = {
  enter: {
    zulipAtom(this: CompileContext, token: Token): undefined {
      this.enter({ type: 'zulipAtom', value: '' }, token);
    },
  },
  exit: {
    zulipAtom(this: CompileContext, token: Token): undefined {
      const node = this.stack[this.stack.length - 1] as ZulipAtom;
      node.value = this.sliceSerialize(token);
      this.exit(token);
    },
    // The real server passes a character reference ("&copy;", "&#169;") to the HTML as written: the text keeps
    // it literally and serialize.ts leaves its "&" unescaped. Link targets are decoded where they are read
    // (decodeCharacterReferences).
    characterReferenceValue(this: CompileContext): undefined {
      this.data.characterReferenceType = undefined;
    },
    characterReference(this: CompileContext, token: Token): undefined {
      const tail = this.stack.pop() as Literal;
      tail.value += this.sliceSerialize(token);
      if (tail.position) tail.position.end = { line: token.end.line, column: token.end.column, offset: token.end.offset };
    },
  },
};
