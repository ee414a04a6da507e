/** What a decorator changes; everything else reaches the inner store as it was called. */
export interface Decoration<S extends object> {
  /** The methods the decorator replaces; it calls the inner store itself. */
  readonly overrides?: Partial<S>;
  /**
   * Runs around every call no override replaces, named by its method. `call`
   * invokes the inner method with exactly the arguments the caller gave.
   */
  around?(this: void, method: string, call: () => unknown): unknown;
}

/**
 * Builds a decorator of `inner` that forwards every method it does not
 * override, by construction: the forwarded call is the inner method with the
 * caller's own arguments, so no argument can be dropped, and a method added
 * to the interface later is forwarded without a line written for it. Generic
 * over the interface, so it serves any store seam, whole or split.
 */
export function decorate<S extends object>(inner: S, decoration: Decoration<S>): S {
  const overrides: Partial<S> = decoration.overrides ?? {};
  const { around } = decoration;
  // One forwarder per method, made on its first call: a store is asked for a method on every request.
  const forwarders = new Map<string | symbol, { readonly method: Method; readonly forward: Method }>();
  return new Proxy(inner, {
    get(target, property) {
      if (Object.hasOwn(overrides, property)) return overrides[property as keyof S];
      const value: unknown = Reflect.get(target, property);
      if (typeof value !== 'function') return value;
      const method = value as Method;
      const made = forwarders.get(property);
      if (made?.method === method) return made.forward;
      const forward: Method =
        around === undefined || typeof property !== 'string'
          ? (...args) => method.apply(target, args)
          : (...args) => around(property, () => method.apply(target, args));
      forwarders.set(property, { method, forward });
      return forward;
    },
  });
}

type Method = (...args: unknown[]) => unknown;
