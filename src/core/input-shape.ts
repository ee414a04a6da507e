/** What makes a request body unusable before anything reads it: seen on the parsed body, or in its text (`json-text.ts`). */
export type InputDefect =
  /** Arrays and objects nested deeper than the limit. */
  | { readonly kind: 'too-deep'; readonly max: number }
  /**
   * An integer beyond ±(2^53 − 1), or a number too large for a double:
   * parsing rounded it to a neighbour (9007199254740993 reads as ...992, 1e400
   * as Infinity), so two different requests would share one fingerprint.
   */
  | { readonly kind: 'unsafe-number' }
  /** Bytes that are not UTF-8: a decoder would read each as U+FFFD, and two different bodies as one. */
  | { readonly kind: 'not-utf8' }
  /**
   * One object naming a member twice, however spelt (`"a"` and `"\u0061"`):
   * a parser keeps one of them, and a proxy or the application may read the other.
   */
  | { readonly kind: 'duplicate-member' };

/**
 * The first defect of `value` (parsed JSON), or undefined. A scalar is depth
 * 0, `[]` and `{}` are 1, `[[1]]` is 2. Walked with a stack of its own, not by
 * recursion: the body is the client's, and its depth must not decide the
 * server's stack.
 */
export function inputDefect(value: unknown, maxDepth: number): InputDefect | undefined {
  const pending: { readonly value: unknown; readonly depth: number }[] = [{ value, depth: 0 }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    if (typeof next.value === 'number' && unsafe(next.value)) return { kind: 'unsafe-number' };
    if (typeof next.value !== 'object' || next.value === null) continue;
    const depth = next.depth + 1;
    if (depth > maxDepth) return { kind: 'too-deep', max: maxDepth };
    for (const child of Object.values(next.value)) pending.push({ value: child, depth });
  }
  return undefined;
}

function unsafe(value: number): boolean {
  return !Number.isFinite(value) || (Number.isInteger(value) && !Number.isSafeInteger(value));
}
