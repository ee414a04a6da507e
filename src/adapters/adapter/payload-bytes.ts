import { RetrysafeError } from '../../core/errors.js';

/** Reads what a transparent route answered (nothing, a string, bytes, a Node or web stream) into bytes, to be stored and sent. */
export async function payloadBytes(payload: unknown): Promise<Buffer> {
  if (payload === undefined || payload === null) return Buffer.alloc(0);
  if (typeof payload === 'string') return Buffer.from(payload, 'utf8');
  if (payload instanceof Uint8Array) return Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength);
  if (typeof payload === 'object' && Symbol.asyncIterator in payload) {
    const chunks: Buffer[] = [];
    for await (const chunk of payload as AsyncIterable<unknown>)
      chunks.push(typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : Buffer.from(chunk as Uint8Array));
    return Buffer.concat(chunks);
  }
  throw new RetrysafeError(
    'misuse',
    `A transparent route sent a payload of type ${typeof payload}, which cannot be captured.`,
  );
}
