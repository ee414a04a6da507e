/** A Node request's headers as sent: names and values alternating, names in their own case. */
export interface RawHeaders {
  readonly rawHeaders: readonly string[];
}

/**
 * The lines of header `name` (lower case), in order, as Node's
 * `headersDistinct` would give them. Read from `rawHeaders` because a request
 * built in process (Fastify's `inject`, light-my-request) has no working
 * `headersDistinct`, and tests send their requests that way.
 */
export function headerLines(request: RawHeaders, name: string): string[] | undefined {
  const { rawHeaders } = request;
  let lines: string[] | undefined;
  for (let at = 0; at + 1 < rawHeaders.length; at += 2) {
    const sent = rawHeaders[at] as string;
    // Lengths first: most names differ in length, and lower-casing each would make a string per header.
    if (sent.length === name.length && sent.toLowerCase() === name) (lines ??= []).push(rawHeaders[at + 1] as string);
  }
  return lines;
}
