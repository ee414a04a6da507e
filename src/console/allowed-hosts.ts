/**
 * The names a console answers for. A page drawn for another name is a DNS
 * rebinding: a site that points its own name at the console's address reads
 * it, and posts to it, as its own origin.
 */

/** The loopback names, on any port: a console mounted without `allowedHosts`. */
export const LOOPBACK_HOSTS: readonly string[] = ['localhost', '127.0.0.1', '[::1]'];

/**
 * Whether a `Host` header names an allowed host: an entry `name` allows the
 * name on any port, `name:port` on that port alone. Names are compared without
 * case; a missing or empty header is refused.
 */
export function allowedHost(allowed: readonly string[], host: string | undefined): boolean {
  if (host === undefined || host === '') return false;
  const given = hostParts(host);
  return allowed.some((entry) => {
    const wanted = hostParts(entry);
    return wanted.name === given.name && (wanted.port === undefined || wanted.port === given.port);
  });
}

/** `name` and `port` of `name[:port]`, an IPv6 address in brackets. */
function hostParts(host: string): { readonly name: string; readonly port?: string } {
  const lower = host.trim().toLowerCase();
  const colon = lower.lastIndexOf(':');
  return colon === -1 || colon < lower.lastIndexOf(']')
    ? { name: lower }
    : { name: lower.slice(0, colon), port: lower.slice(colon + 1) };
}
