const utf8 = new TextDecoder('utf-8', { fatal: true });

/** A message body read as JSON: its text and value, or why it could not be read. */
export type JsonPayload =
  { readonly ok: true; readonly text: string; readonly value: unknown } | { readonly ok: false };

/** Reads `bytes` as UTF-8 JSON. Malformed UTF-8 fails rather than turning into replacement characters. */
export function readJsonPayload(bytes: Uint8Array | string): JsonPayload {
  try {
    const text = typeof bytes === 'string' ? bytes : utf8.decode(bytes);
    return { ok: true, text, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false };
  }
}
