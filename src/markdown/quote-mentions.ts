// Mentions inside quotes notify nobody: the real server's quote processor rewrites every user and group mention
// on a quoted line into its silent form (`@**Name**` → `@_**Name**`, `@*group*` → `@_*group*`) before parsing
// it, so a quoted wildcard or name is shown but not counted. A ```quote block becomes `>` lines there, so the
// same holds inside it. Lines of code blocks are not quoted text and stay as they are.

const userMention = /(?<![^\s'"({[/<])@_?\*\*([^*]+)\*\*/g;
const groupMention = /(?<![^\s'"({[/<])@_?\*([^*]+)\*/g;
const fenceLine = /^(`{3,}|~{3,}) *(?:\{?\.?([a-zA-Z0-9_+\-./#]+))?/;
const containers = new Set(['quote', 'quoted', 'spoiler']);

export function silenceMentions(line: string): string {
  if (!line.includes('@')) return line;
  return line.replace(userMention, '@_**$1**').replace(groupMention, '@_*$1*');
}

/**
 * Silences the mentions on quoted lines of `source` (all its lines when `quoted`, as for a ```quote block's
 * content), outside code blocks.
 */
export function silenceQuotedMentions(source: string, quoted = false): string {
  if (!source.includes('@') || (!quoted && !source.includes('>'))) return source;
  const lines = source.split('\n');
  const fences: { fence: string; code: boolean }[] = [];
  let changed = false;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const top = fences[fences.length - 1];
    if (top && line.trimEnd() === top.fence) {
      fences.pop();
      continue;
    }
    const inCode = fences.some((f) => f.code);
    const fence = inCode ? null : fenceLine.exec(line);
    if (fence) {
      fences.push({ fence: fence[1]!, code: !containers.has((fence[2] ?? '').toLowerCase()) });
      continue;
    }
    if (inCode || !(quoted || /^ {0,3}>/.test(line))) continue;
    const silenced = silenceMentions(line);
    if (silenced !== line) {
      lines[i] = silenced;
      changed = true;
    }
  }
  return changed ? lines.join('\n') : source;
}
