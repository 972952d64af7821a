// A long table parsed in groups of rows. micromark keeps every event, token and per-cell tokenizer of a parse
// alive until the parse ends; for a table of thousands of cells that is tens of megabytes, which the garbage
// collector copies again and again while the parse runs, so the cost grows faster than the table (issue 19: a
// 10,000-character table took 160 ms, three times plain remark on the same text). Body rows are independent of
// each other (each is one line, its cells are inline content of their own), so a table can be parsed as
// several small tables with the same header and its rows joined back into one: the tree is the one a single
// parse gives, positions included.
//
// Most rows of a long table hold only words, and for those the tree is known without micromark: a row whose cells
// keep to plain-text.ts's characters (no construct of the parser starts at any of them; so no backslash, no
// backtick, no tab, and every pipe is a cell's edge) is built directly, as GFM's table tokenizer and
// mdast-util-gfm-table build it:
// - a cell runs from the pipe before it to the pipe after it; the row's last cell runs to the end of the line,
//   over its closing pipe and any whitespace after that (a row with nothing but whitespace after its last pipe has
//   one cell fewer than it has pipes; one with text there has a last cell without a closing pipe);
// - a cell's content is trimmed of spaces and is one text node, or none when it is empty;
// - rows keep the cells they have: missing cells are added and extra ones dropped later, in mdast→hast, as for
//   parsed rows.
// The parse does not depend on the realm (linkifiers, emoji, mentions come later, on the text nodes), so the
// rows built here go through the same transforms as parsed ones. Rows that do not qualify are parsed as before.
import { plainCharLength } from './plain-text.js';
import type { MdNode, Point } from './tree.js';

/** Rows per separately parsed group, in characters of source: small enough that a group's parse stays cheap. */
export const ROW_GROUP_CHARS = 600;

type Parse = (source: string) => MdNode;

interface Line {
  start: number;
  /** Offset of the line's end, before its line ending. */
  end: number;
}

interface LongTable {
  /** The header and delimiter rows, as written. */
  head: string;
  /** Body rows parsed apart, in groups of whole lines; the rows after them stay in the main document. */
  groups: Line[][];
  /** The removed source range [cutStart, cutEnd): from the first body row to the start of the rows that stay. */
  cutStart: number;
  cutEnd: number;
  /** 0-based line of the first body row, and the number of lines removed. */
  firstBodyLine: number;
  cutLines: number;
  headerStart: number;
  rowsStaying: number;
}

function linesOf(source: string): Line[] {
  const lines: Line[] = [];
  for (let start = 0; start <= source.length; ) {
    const newline = source.indexOf('\n', start);
    const end = newline === -1 ? source.length : newline;
    lines.push({ start, end });
    start = end + 1;
  }
  return lines;
}

const isBlank = (source: string, line: Line): boolean => /^[ \t]*$/.test(source.slice(line.start, line.end));
/** A delimiter row that starts with a pipe: `|-|:-:|`, `| --- | --- |`. */
const DELIMITER_ROW = /^\|[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$/;

/**
 * The tables worth splitting: every line of one starts with `|` in the first column, at the start of the
 * document or after a blank line (so no paragraph, quote or list item is open to take it in), with no fence
 * anywhere before it (so it is not code). Anything else is left to the main parse.
 */
function findLongTables(source: string): LongTable[] {
  const found: LongTable[] = [];
  const lines = linesOf(source);
  for (let h = 0; h + 2 < lines.length; h++) {
    const header = lines[h]!;
    if (source.charCodeAt(header.start) !== 0x7c /* | */) continue;
    if (h > 0 && !isBlank(source, lines[h - 1]!)) continue;
    if (/```|~~~/.test(source.slice(0, header.start))) break;
    const delimiter = lines[h + 1]!;
    if (!DELIMITER_ROW.test(source.slice(delimiter.start, delimiter.end))) continue;
    let last = h + 2;
    while (last < lines.length && source.charCodeAt(lines[last]!.start) === 0x7c) last++;
    const body = lines.slice(h + 2, last);
    const groups: Line[][] = [];
    let group: Line[] = [];
    let size = 0;
    for (const row of body) {
      group.push(row);
      size += row.end - row.start + 1;
      if (size >= ROW_GROUP_CHARS) {
        groups.push(group);
        group = [];
        size = 0;
      }
    }
    // The last group stays in the document, where it is followed by what follows the table.
    if (group.length === 0) group = groups.pop() ?? [];
    if (groups.length === 0) {
      h = last;
      continue;
    }
    found.push({
      head: source.slice(header.start, delimiter.end),
      groups,
      cutStart: body[0]!.start,
      cutEnd: group[0]!.start,
      firstBodyLine: h + 2,
      cutLines: body.length - group.length,
      headerStart: header.start,
      rowsStaying: group.length,
    });
    h = last;
  }
  return found;
}

/** A shift for every position at or after `from`: `offset` characters and `lines` lines further. */
interface Shift {
  from: number;
  offset: number;
  lines: number;
}

/** Moves the positions in `node` by the last of `shifts` (in increasing `from` order) that they are at or after. */
function shiftPositions(node: MdNode, shifts: Shift[]): void {
  const pending = [node];
  while (pending.length > 0) {
    const current = pending.pop()!;
    const position = current.position;
    if (position) {
      for (const point of [position.start, position.end]) {
        if (point.offset === undefined) continue;
        let shift: Shift | undefined;
        for (const candidate of shifts) {
          if (candidate.from > point.offset) break;
          shift = candidate;
        }
        if (!shift) continue;
        point.offset += shift.offset;
        if (point.line !== undefined) point.line += shift.lines;
      }
    }
    if (current.children) pending.push(...current.children);
  }
}

const PIPE = 0x7c;
const SPACE = 0x20;

/** A point on the 1-based line `line` starting at `lineStart`. */
const pointAt = (offset: number, line: number, lineStart: number): Point => ({ line, column: offset - lineStart + 1, offset });

/**
 * The tableRow micromark gives the body row `row` (on 1-based line `line`), when its cells keep to plain text;
 * otherwise undefined. (`row` starts with a pipe.)
 */
function plainRow(source: string, row: Line, line: number): MdNode | undefined {
  const pipes = [row.start];
  let trailingText = false;
  for (let i = row.start + 1; i < row.end; ) {
    const c = source.charCodeAt(i);
    if (c === PIPE) {
      pipes.push(i);
      trailingText = false;
      i++;
      continue;
    }
    const length = plainCharLength(source, i);
    if (length === 0) return undefined;
    if (c !== SPACE) trailingText = true;
    i += length;
  }
  const cellCount = trailingText ? pipes.length : pipes.length - 1;
  // A lone pipe is a row of one empty cell: rare enough to leave to the parser.
  if (cellCount === 0) return undefined;
  const cells: MdNode[] = [];
  for (let k = 0; k < cellCount; k++) {
    const last = k === cellCount - 1;
    let start = pipes[k]! + 1;
    let end = k + 1 < pipes.length ? pipes[k + 1]! : row.end;
    while (start < end && source.charCodeAt(start) === SPACE) start++;
    while (end > start && source.charCodeAt(end - 1) === SPACE) end--;
    const children: MdNode[] =
      start === end
        ? []
        : [{ type: 'text', value: source.slice(start, end), position: { start: pointAt(start, line, row.start), end: pointAt(end, line, row.start) } }];
    const cellEnd = last ? row.end : pipes[k + 1]!;
    cells.push({ type: 'tableCell', children, position: { start: pointAt(pipes[k]!, line, row.start), end: pointAt(cellEnd, line, row.start) } });
  }
  return { type: 'tableRow', children: cells, position: { start: pointAt(row.start, line, row.start), end: pointAt(row.end, line, row.start) } };
}

/**
 * The body rows of `group` (its first on 0-based line `firstLine`), positioned in the whole source: built
 * directly when `fastRows` allows and they are plain, the others parsed together as a table of their own under
 * the head. Undefined when that parse does not give them back as rows.
 */
function rowsOfGroup(parse: Parse, table: LongTable, group: Line[], source: string, firstLine: number, fastRows: boolean): MdNode[] | undefined {
  const rows = group.map((row, i) => (fastRows ? plainRow(source, row, firstLine + i + 1) : undefined));
  const parsedRows = group.filter((_, i) => rows[i] === undefined);
  if (parsedRows.length === 0) return rows as MdNode[];
  const tree = parse(`${table.head}\n${parsedRows.map((row) => source.slice(row.start, row.end)).join('\n')}`);
  const parsed = tree.children?.length === 1 ? tree.children[0] : undefined;
  if (parsed?.type !== 'table' || parsed.children?.length !== parsedRows.length + 1) return undefined;
  // Each parsed row is one line: it moves by its own distance from where it was parsed.
  let offset = table.head.length + 1;
  let line = 3;
  let next = 1;
  for (let i = 0; i < group.length; i++) {
    if (rows[i] !== undefined) continue;
    const row = parsed.children[next++]!;
    shiftPositions(row, [{ from: 0, offset: group[i]!.start - offset, lines: firstLine + i + 1 - line }]);
    rows[i] = row;
    offset += group[i]!.end - group[i]!.start + 1;
    line++;
  }
  return rows as MdNode[];
}

/** What parseSplittingLongTables may do; the defaults are for rendering, the others for checking it. */
export interface SplitOptions {
  /** Builds plain rows without parsing them (true by default); false parses every row. */
  fastRows?: boolean;
}

/**
 * `parse(source)`, with long tables' body rows parsed in groups, or built directly when they are plain. Falls
 * back to one parse whenever a part does not come out as the table rows it was taken for.
 */
export function parseSplittingLongTables(parse: Parse, source: string, options: SplitOptions = {}): MdNode {
  const fastRows = options.fastRows ?? true;
  const tables = source.length > 2 * ROW_GROUP_CHARS && source.includes('\n|') && !source.includes('\r') ? findLongTables(source) : [];
  if (tables.length === 0) return parse(source);
  // The main document: the source without the rows parsed apart. A position there past a cut is `shift` behind.
  let main = '';
  let kept = 0;
  const shifts: Shift[] = [];
  let removed = 0;
  let removedLines = 0;
  for (const table of tables) {
    main += source.slice(kept, table.cutStart);
    kept = table.cutEnd;
    removed += table.cutEnd - table.cutStart;
    removedLines += table.cutLines;
    shifts.push({ from: table.cutStart - (removed - (table.cutEnd - table.cutStart)), offset: removed, lines: removedLines });
  }
  main += source.slice(kept);
  const tree = parse(main);
  shiftPositions(tree, shifts);
  for (const table of tables) {
    const parsed = tree.children?.find((child) => child.position?.start.offset === table.headerStart);
    // Lines right after the table without a pipe are rows too, in both parses alike.
    if (parsed?.type !== 'table' || (parsed.children?.length ?? 0) < table.rowsStaying + 1) return parse(source);
    const moved: MdNode[] = [];
    let line = table.firstBodyLine;
    for (const group of table.groups) {
      const rows = rowsOfGroup(parse, table, group, source, line, fastRows);
      if (!rows) return parse(source);
      moved.push(...rows);
      line += group.length;
    }
    parsed.children!.splice(1, 0, ...moved);
  }
  return tree;
}
