/**
 * `{ ...base, ...extra }`. Node 20's V8 builds an object literal that opens
 * with a spread on a slow path: about a microsecond, and a new hidden class,
 * for each object (`{ ...reply.headers, name: value }` was 3 % of a cached
 * replay's CPU). Copying into a fresh object takes about 50 ns. The lint
 * rule `no-restricted-syntax` points here. Members are assigned, as
 * `Object.assign` does, so neither object may hold a member named
 * `__proto__`: use it for records, settings and headers as `toReply` keeps them.
 */
export function extend<Base extends object, Extra extends object>(base: Base, extra: Extra): Base & Extra {
  return Object.assign({}, base, extra);
}
