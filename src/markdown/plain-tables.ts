// Tables of plain text for plain-text.ts's fast path: a block of lines that each start and end with `|` (a header
// row, a delimiter row, body rows) whose cells hold plain text or nothing. GFM's table rules, as the full renderer
// applies them (long-tables.ts describes the same rows):
// - a cell runs from one pipe to the next and is trimmed of spaces; with no backslash or backtick in plain text,
//   every pipe is a cell's edge;
// - the delimiter row has as many cells as the header, each dashes with an optional colon at either end, which
//   set the column's alignment (`:-` left, `-:` right, `:-:` center);
// - a body row keeps the header's number of cells: missing ones are empty, extra ones are dropped.
// Anything else (a line in the block that is not such a row, a header cell that is empty or not plain) is left to
// the parser.

type Align = 'left' | 'right' | 'center' | undefined;

export interface PlainTable {
  kind: 'table';
  header: string[];
  aligns: Align[];
  /** Body rows' cells as written: the HTML gives each row the header's number of cells. */
  rows: string[][];
}

const delimiterCell = /^ *(:?)-+(:?) *$/;

function cellsOf(row: string): string[] | undefined {
  if (row.length < 2 || !row.startsWith('|') || !row.endsWith('|')) return undefined;
  return row.slice(1, -1).split('|').map((cell) => cell.trim());
}

function alignOf(cell: string): Align | null {
  const match = delimiterCell.exec(cell);
  if (!match) return null;
  if (match[1] && match[2]) return 'center';
  return match[1] ? 'left' : match[2] ? 'right' : undefined;
}

/** The table `lines` make, when every cell is plain (`isPlain`) or, outside the header, empty; otherwise undefined. */
export function plainTable(lines: string[], isPlain: (text: string) => boolean): PlainTable | undefined {
  if (lines.length < 2) return undefined;
  const header = cellsOf(lines[0]!);
  const delimiters = cellsOf(lines[1]!);
  if (!header || !delimiters || delimiters.length !== header.length || !header.every(isPlain)) return undefined;
  const aligns: Align[] = [];
  for (const cell of delimiters) {
    const align = alignOf(cell);
    if (align === null) return undefined;
    aligns.push(align);
  }
  const rows: string[][] = [];
  for (const line of lines.slice(2)) {
    const cells = cellsOf(line);
    if (!cells || !cells.every((cell) => cell === '' || isPlain(cell))) return undefined;
    rows.push(cells);
  }
  return { kind: 'table', header, aligns, rows };
}

const cellHtml = (tag: 'th' | 'td', text: string, align: Align) => `<${tag}${align ? ` align="${align}"` : ''}>${text}</${tag}>`;
const rowHtml = (tag: 'th' | 'td', cells: string[], aligns: Align[]) => `<tr>\n${cells.map((cell, i) => cellHtml(tag, cell, aligns[i])).join('\n')}\n</tr>`;

export function tableHtml(table: PlainTable): string {
  const head = `<thead>\n${rowHtml('th', table.header, table.aligns)}\n</thead>`;
  const width = (row: string[]) => table.header.map((_, i) => row[i] ?? '');
  const body = table.rows.length > 0 ? `\n<tbody>\n${table.rows.map((row) => rowHtml('td', width(row), table.aligns)).join('\n')}\n</tbody>` : '';
  return `<table>\n${head}${body}\n</table>`;
}

/** The table's texts that realm linkifiers read, each cell apart (those a row has beyond the header's too). */
export const tableTexts = (table: PlainTable): string[] => [...table.header, ...table.rows.flat()].filter((text) => text !== '');
