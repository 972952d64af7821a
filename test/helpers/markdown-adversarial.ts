// Families of adversarial Markdown, each a function of the input size: used by the DoS property test and by
// bench/markdown.ts. Each targets a place where a Markdown renderer can go superlinear or recurse per level.
const fill = (size: number, unit: string, tail = ''): string => unit.repeat(Math.max(0, Math.floor((size - tail.length) / unit.length))) + tail;

export const adversarialFamilies: Record<string, (size: number) => string> = {
  'nested quotes': (n) => fill(n, '>', ' x'),
  'nested quotes, spaced': (n) => fill(n, '> ', 'x'),
  'nested bullets': (n) => fill(n, '- ', 'x'),
  'nested numbers': (n) => fill(n, '1. ', 'x'),
  'quoted bullets': (n) => fill(n, '> - ', 'x'),
  'indented bullets': (n) => {
    const lines: string[] = [];
    for (let i = 0, used = 0; used < n; i++) {
      lines.push(`${' '.repeat(2 * i)}- a`);
      used += 2 * i + 4;
    }
    return lines.join('\n').slice(0, n);
  },
  'quote fences': (n) => fill(n, '```quote\n'),
  'spoiler fences': (n) => fill(n, '```spoiler a\n'),
  'growing fences': (n) => {
    const levels = Math.max(1, Math.floor(Math.sqrt(n)));
    return Array.from({ length: levels }, (_, i) => `${'`'.repeat(levels - i + 3)}quote`).join('\n').slice(0, n);
  },
  'emphasis run': (n) => `${'*'.repeat(Math.floor(n / 2) - 1)}a${'*'.repeat(Math.floor(n / 2) - 1)}`,
  'emphasis pairs': (n) => fill(n, '*a'),
  'strong pairs': (n) => fill(n, '**a'),
  'strikethrough pairs': (n) => fill(n, '~~a'),
  'mixed delimiters': (n) => fill(n, '*_~'),
  'open brackets': (n) => fill(n, '['),
  'bracket pairs': (n) => fill(n, '[]'),
  'unclosed links': (n) => fill(n, '[a]('),
  'nested images': (n) => fill(n, '!['),
  'links': (n) => fill(n, '[a](http://a.b/) '),
  'bare urls': (n) => fill(n, 'http://a.b/ '),
  'email-like': (n) => `a@${fill(n - 3, 'b.')}!`,
  'email-like words': (n) => fill(n, 'a@b.'),
  'backtick runs': (n) => fill(n, '`a'),
  'unclosed mentions': (n) => fill(n, '@**'),
  'unclosed times': (n) => fill(n, '<time:'),
  'math delimiters': (n) => fill(n, '$$a'),
  'table rows': (n) => `|a|b|\n|-|-|\n${fill(n - 12, '|x|y|\n')}`,
  'hard line breaks': (n) => fill(n, 'a\n'),
  'bullet list': (n) => fill(n, '- a\n'),
  'numbered list': (n) => fill(n, '1. a\n'),
  'leading spaces': (n) => fill(n, ' ', 'a'),
  'entities': (n) => fill(n, '&amp;'),
  'backslashes': (n) => fill(n, '\\'),
};

/**
 * Each item closes a nested list: micromark's EditMap copied every event per close, so this was quadratic
 * (seconds at 8,000 characters). Linear now, but still above the 50 ms target at 10,000 characters (about
 * 30 µs per character), so it is kept out of the families held to that bound; the render pool bounds it.
 */
export const repeatedNestedLists = (n: number): string => fill(n, '- a\n  - b\n');

/**
 * Long messages of many small blocks or lines with markup, which take the parser (plain-text.ts renders those of
 * plain text). micromark's work per block, list item or line (a tokenizer for its flow, one for its content, one
 * for its text, and their events, all kept until the parse ends, so the garbage collector copies them again and
 * again) costs 20-120 µs each on our machine, over the 50 ms target at 10,000 characters; the benchmark reports
 * them beside the families, and the render pool bounds them.
 */
export const parserBound: Record<string, (size: number) => string> = {
  'nested lists, repeated': repeatedNestedLists,
  'bullet list, items with markup': (n) => fill(n, '- *a*\n'),
  'numbered list, items with markup': (n) => fill(n, '1. `a`\n'),
  'table rows, cells with markup': (n) => `|a|b|\n|-|-|\n${fill(n - 12, '|*x*|y|\n')}`,
  'lines with emphasis': (n) => fill(n, '*a* b\n'),
  'lines with code spans': (n) => fill(n, 'a `b` c\n'),
  'lines with links': (n) => fill(n, '[a](http://a.b) c\n'),
  'paragraphs with emphasis': (n) => fill(n, '*a*\n\n'),
  'quotes apart': (n) => fill(n, '> a\n\n'),
  'quote blocks': (n) => fill(n, '```quote\na\n```\n'),
};

/** Pieces that random "soups" (the DoS property test, the benchmark) are made of. */
export const soupPieces: string[] = [
  '*', '**', '~~', '_', '>', '> ', '- ', '1. ', '  ', '\n', '\n\n', '```quote\n', '````quote\n', '```spoiler x\n', '```\n', '~~~\n',
  '```math\n', '[', ']', '(', ')', '![', '](http://a.b/)', '`', '$$', '@**', '@**Iago**', '#**', '#**Denmark**', '<time:', '>',
  'a', ' ', 'http://a.b/c', ':smile:', '|', '|-|', '\\', '&amp;', '<', '"', 'é', '😀',
];

/** Ordinary messages, the kind the benchmark's throughput figure is about. */
export const typicalMessages: string[] = [
  'Hi @**Iago**, can you review https://github.com/zulip/zulip/pull/123 today? :thumbs_up:',
  'The build is **green** again. Thanks everyone!',
  '```python\ndef f(x):\n    return x * 2\n```\nThat is the helper I meant.',
  '> quoted from the design doc\n\nI agree with this, but *only* for the `messages` table.',
  '- first item\n- second item with a [link](https://example.com)\n  - nested item\n- third item',
  '1. install\n2. configure `settings.py`\n3. run `./manage.py migrate`',
  '#**Denmark>castle** has the details; see also ~~the old plan~~ the new one.',
  '```spoiler Ending\nThe butler did it.\n```',
  '| name | value |\n| --- | --- |\n| a | 1 |\n| b | 2 |',
  'Meeting at <time:2024-05-01T15:00:00+02:00>, room 4. $$e^{i\\pi} + 1 = 0$$',
];
