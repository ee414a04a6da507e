/**
 * Whether `value` (parsed JSON) nests arrays and objects deeper than `max`.
 * A scalar is depth 0, `[]` and `{}` are 1, `[[1]]` is 2. Walked with a stack
 * of its own, not by recursion: the body is the client's, and its depth must
 * not decide the server's stack.
 */
export function nestedDeeperThan(value: unknown, max: number): boolean {
  const pending: { readonly value: unknown; readonly depth: number }[] = [{ value, depth: 0 }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    if (typeof next.value !== 'object' || next.value === null) continue;
    const depth = next.depth + 1;
    if (depth > max) return true;
    for (const child of Object.values(next.value)) pending.push({ value: child, depth });
  }
  return false;
}
