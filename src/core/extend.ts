/**
 * `{ ...base, ...extra }`. Node 20's V8 builds an object literal that opens
 * with a spread and goes on on a slow path: about a microsecond, and a new
 * hidden class, for each object (`{ ...reply.headers, name: value }` was 3 %
 * of a cached replay's CPU). A spread alone clones `base`'s shape in one
 * allocation; `extra` is then assigned onto the clone. Against
 * `Object.assign({}, base, extra)`, which grew the copy one member at a time,
 * the configuration an attempt extends per request (23 members) took 65 ns
 * and 248 bytes instead of 1.2 µs and 1.7 KB. The lint rule
 * `no-restricted-syntax` points here. `extra`'s members are assigned, as
 * `Object.assign` does, so neither object may hold a member named
 * `__proto__`: use it for records, settings and headers as `toReply` keeps them.
 */
export function extend<Base extends object, Extra extends object>(base: Base, extra: Extra): Base & Extra {
  const copy = { ...base };
  return Object.assign(copy, extra);
}
