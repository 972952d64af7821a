// Fences as the real server pairs them, expressed in CommonMark's terms before micromark parses.
//
// The real server's rules: a fence line starts at the line's first character; a code (or math) block closes only
// at a line that is exactly its opening fence (trailing spaces aside), so a longer fence inside it is content;
// a quote or spoiler block holds Markdown, where fence lines open blocks of their own, and closes at its own
// fence once those are closed; an unclosed block runs to the end of the message. CommonMark closes a block at
// any fence of its character at least as long as the opening one, so where that would close a block early the
// block's fences are lengthened here (their length is not part of the output).

import { MarkdownRenderingError, MAX_FENCE_DEPTH } from './limits.js';

/** The real server's fence line: the fence, then an optional language and header without fence characters. */
const fenceLine = /^(`{3,}|~{3,}) *(?:\{?\.?([a-zA-Z0-9_+\-./#]+) *(?:[^ ~`][^~`]*)?\}?)?$/;
const containers = new Set(['quote', 'quoted', 'spoiler']);

interface Block {
  fence: string;
  container: boolean;
  open: number;
  /** Lines CommonMark could take as closing this block's fence: same character, alone on their line. */
  close?: number;
}

/** Rewrites fence lengths in `source` so that CommonMark pairs fences as the real server does. */
export function pairFencesLikeZulip(source: string): string {
  if (!source.includes('```') && !source.includes('~~~')) return source;
  const lines = source.split('\n');
  const blocks: Block[] = [];
  const stack: Block[] = [];
  lines.forEach((line, i) => {
    const top = stack[stack.length - 1];
    if (top && line.trimEnd() === top.fence) {
      top.close = i;
      stack.pop();
      return;
    }
    if (top && !top.container) return;
    const m = fenceLine.exec(line.trimEnd());
    if (!m) return;
    const block: Block = { fence: m[1]!, container: containers.has((m[2] ?? '').toLowerCase()), open: i };
    blocks.push(block);
    stack.push(block);
    // Deeper than the renderer goes anyway (blocks.ts refuses it); bounded here so this pass stays linear.
    if (stack.length > MAX_FENCE_DEPTH + 1) throw new MarkdownRenderingError();
  });
  if (blocks.length === 0) return source;

  // Per line, a bare fence CommonMark could close a block with: its character and length.
  const bare = lines.map((line) => /^ {0,3}(`{3,}|~{3,})[ \t]*$/.exec(line)?.[1]);
  // Inner blocks first (they open later), so that an outer block sees its inner fences at their final length.
  let changed = false;
  for (const block of blocks.reverse()) {
    const marker = block.fence[0]!;
    const end = block.close ?? lines.length;
    let longest = 0;
    for (let i = block.open + 1; i < end; i++) {
      const run = bare[i];
      if (run !== undefined && run[0] === marker) longest = Math.max(longest, run.length);
    }
    if (longest < block.fence.length) continue;
    const longer = marker.repeat(longest + 1);
    changed = true;
    lines[block.open] = longer + lines[block.open]!.slice(block.fence.length);
    if (block.close !== undefined) {
      lines[block.close] = longer + lines[block.close]!.slice(block.fence.length);
      bare[block.close] = longer;
    }
  }
  return changed ? lines.join('\n') : source;
}
