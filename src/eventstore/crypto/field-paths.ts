/**
 * A sealing rule names a field by its path in the event's data: `content` (a top-level field),
 * `draft.content` (a field of an object), `drafts.*.content` (that field of every element of a
 * list). Each value found gets its concrete path (`drafts.0.content`) as the associated data of
 * its envelope, so a top-level field keeps the label it always had.
 */

/** Calls `visit` with every value at `path` in `data` and its concrete path. */
export function forEachAt(data: unknown, path: string, visit: (value: unknown, concrete: string) => void): void {
  // The common case, on every sealed event every reader opens: a top-level field.
  if (!path.includes('.')) {
    if (data !== null && typeof data === 'object' && !Array.isArray(data) && path in data) visit((data as Record<string, unknown>)[path], path);
    return;
  }
  walk(data, path.split('.'), '', (value, concrete) => {
    visit(value, concrete);
    return value;
  });
}

/**
 * `data` with every value at `path` replaced by `replace(value, concrete path)`: copied on write,
 * so the input is never changed and unchanged branches are shared.
 */
export function mapAt<T>(data: T, path: string, replace: (value: unknown, concrete: string) => unknown): T {
  // The common case, on every event a rebuild reads: a top-level field.
  if (!path.includes('.')) {
    if (data === null || typeof data !== 'object' || !(path in data)) return data;
    const value = (data as Record<string, unknown>)[path];
    const next = replace(value, path);
    return next === value ? data : { ...data, [path]: next };
  }
  return walk(data, path.split('.'), '', replace) as T;
}

function walk(node: unknown, segments: readonly string[], prefix: string, replace: (value: unknown, concrete: string) => unknown): unknown {
  const [head, ...rest] = segments;
  if (head === undefined) return replace(node, prefix);
  if (head === '*') {
    if (!Array.isArray(node)) return node;
    let out: unknown[] | undefined;
    node.forEach((item, i) => {
      const next = walk(item, rest, join(prefix, String(i)), replace);
      if (next !== item) (out ??= [...node])[i] = next;
    });
    return out ?? node;
  }
  if (node === null || typeof node !== 'object' || Array.isArray(node) || !(head in node)) return node;
  const record = node as Record<string, unknown>;
  const next = walk(record[head], rest, join(prefix, head), replace);
  return next === record[head] ? node : { ...record, [head]: next };
}

const join = (prefix: string, segment: string) => (prefix ? `${prefix}.${segment}` : segment);
