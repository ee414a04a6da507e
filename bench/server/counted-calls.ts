/** A counter shared by the wrappers of one process. */
export interface CallCounter {
  count: number;
}

/**
 * Wraps the named methods of `target` in place so that each call adds one to
 * `counter`. Used on Redis clients and adapters whose methods each send
 * exactly one command, so the count is the number of Redis round trips.
 */
export function countCalls<T extends object>(
  target: T,
  methods: readonly (keyof T & string)[],
  counter: CallCounter,
): T {
  for (const name of methods) {
    const method: unknown = target[name];
    if (typeof method !== 'function') throw new Error(`${name} is not a method`);
    const counted = function countedCall(this: unknown, ...args: unknown[]): unknown {
      counter.count += 1;
      return Reflect.apply(method, this, args) as unknown;
    };
    Object.defineProperty(target, name, { value: counted, configurable: true, writable: true });
  }
  return target;
}
