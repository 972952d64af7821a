/**
 * Whether `value` nests arrays and objects more than `max` levels deep (a scalar is depth 0).
 * Iterative and stops at the first member past the limit, so a hostile document costs at most
 * its size, never the stack.
 */
export function jsonDepthExceeds(value: unknown, max: number): boolean {
  const work: Array<{ value: unknown; depth: number }> = [{ value, depth: 0 }];
  for (let item = work.pop(); item; item = work.pop()) {
    if (item.value === null || typeof item.value !== 'object') continue;
    const depth = item.depth + 1;
    if (depth > max) return true;
    for (const member of Object.values(item.value)) {
      if (member !== null && typeof member === 'object') work.push({ value: member, depth });
    }
  }
  return false;
}
