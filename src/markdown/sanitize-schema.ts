// The elements, attributes and classes Zulip's rendered messages use, and nothing else. Raw HTML in a
// message is never parsed (it stays text), so this is the second line of defence: whatever a bug in an
// earlier stage lets through, no script, event handler or javascript: URL survives.
import type { Options as SanitizeSchema } from 'rehype-sanitize';

// KaTeX styles boxes with lengths and positions only; anything that could fetch or run (url(), expression())
// is refused.
const katexStyle = /^(?:[a-z-]+:[-0-9.a-z% ]+;?)*$/;
const katexClass = /^[a-z][a-z0-9-]*$/;

const mathmlTags = [
  'math', 'semantics', 'annotation', 'mrow', 'mi', 'mn', 'mo', 'ms', 'mtext', 'mspace', 'msub', 'msup', 'msubsup',
  'munder', 'mover', 'munderover', 'mfrac', 'msqrt', 'mroot', 'mtable', 'mtr', 'mtd', 'mlabeledtr', 'mstyle',
  'mpadded', 'mphantom', 'menclose', 'merror',
];
const mathmlAttributes = [
  'mathvariant', 'stretchy', 'fence', 'separator', 'lspace', 'rspace', 'minsize', 'maxsize', 'width', 'height',
  'depth', 'accent', 'accentunder', 'columnalign', 'columnlines', 'columnspacing', 'rowalign', 'rowlines',
  'rowspacing', 'scriptlevel', 'displaystyle', 'linethickness', 'movablelimits', 'symmetric', 'largeop',
  'notation', 'voffset', 'rowspan', 'columnspan', 'encoding', 'display', 'xmlns', 'mathcolor', 'mathbackground',
];

export const zulipSanitizeSchema: SanitizeSchema = {
  strip: ['script', 'style'],
  clobberPrefix: '',
  clobber: [],
  ancestors: {},
  tagNames: [
    'p', 'br', 'strong', 'em', 'del', 'code', 'pre', 'span', 'div', 'a', 'img', 'blockquote', 'ul', 'ol', 'li',
    'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'hr', 'table', 'thead', 'tbody', 'tr', 'th', 'td', 'time', 'video',
    'svg', 'path', 'line', ...mathmlTags,
  ],
  attributes: {
    a: ['href', 'title', ['className', 'stream', 'stream-topic', 'message-link'], 'dataStreamId'],
    div: [
      ['className', 'codehilite', 'spoiler-block', 'spoiler-header', 'spoiler-content', 'message_inline_image', 'message_inline_video'],
      'dataCodeLanguage',
      ['ariaHidden', 'true'],
    ],
    span: [
      ['className', katexClass],
      ['style', katexStyle],
      ['ariaHidden', 'true'],
      'ariaLabel',
      ['role', 'img'],
      'title',
      'dataUserId',
      'dataUserGroupId',
    ],
    img: ['src', 'alt', 'title', ['className', 'emoji', 'inline-image'], 'dataSrcFullsize'],
    ol: ['start'],
    th: [['align', 'left', 'right', 'center']],
    td: [['align', 'left', 'right', 'center']],
    time: ['dateTime'],
    video: ['src', ['preload', 'metadata']],
    svg: ['xmlns', 'width', 'height', 'viewBox', 'preserveAspectRatio', ['style', katexStyle]],
    path: ['d'],
    line: ['x1', 'x2', 'y1', 'y2', 'strokeWidth'],
    ...Object.fromEntries(mathmlTags.map((tag) => [tag, mathmlAttributes])),
  },
  protocols: {
    href: ['http', 'https', 'ftp', 'mailto', 'tel', 'sms', 'bitcoin'],
    src: ['http', 'https'],
  },
  required: {},
};

// Pygments' short token class names (pygments.token.STANDARD_TYPES, 2.20.0), and `hll` for a line marked with
// hl_lines: what real clients' stylesheets colour.
const pygmentsTokenClasses = [
  'bp', 'c', 'c1', 'ch', 'cm', 'cp', 'cpf', 'cs', 'dl', 'err', 'esc', 'fm', 'g', 'gd', 'ge', 'ges', 'gh', 'gi', 'go',
  'gp', 'gr', 'gs', 'gt', 'gu', 'il', 'k', 'kc', 'kd', 'kn', 'kp', 'kr', 'kt', 'l', 'ld', 'm', 'mb', 'mf', 'mh', 'mi',
  'mo', 'n', 'na', 'nb', 'nc', 'nd', 'ne', 'nf', 'ni', 'nl', 'nn', 'no', 'nt', 'nv', 'nx', 'o', 'ow', 'p', 'pm', 'py',
  's', 's1', 's2', 'sa', 'sb', 'sc', 'sd', 'se', 'sh', 'si', 'sr', 'ss', 'sx', 'vc', 'vg', 'vi', 'vm', 'w', 'x', 'hll',
];

/** The content of a highlighted `div.codehilite pre code`: text and token spans, nothing else. */
export const pygmentsCodeSchema: SanitizeSchema = {
  strip: ['script', 'style'],
  clobberPrefix: '',
  clobber: [],
  ancestors: {},
  tagNames: ['span'],
  attributes: { span: [['className', ...pygmentsTokenClasses]] },
  protocols: {},
  required: {},
};
