import { Readable } from 'node:stream';
import type { FastifyRequest, preParsingHookHandler } from 'fastify';
import { isJsonMediaType } from '../core/json-numbers.js';

/** The bytes of each JSON body, as its route's parser read them. */
const texts = new WeakMap<FastifyRequest, Buffer>();

/**
 * A retrysafe route's `preParsing` hook: keeps the bytes of a JSON body as
 * they flow to the route's parser, whichever parser that is and after the
 * application's own hooks (one that inflates the body, say), so that the
 * numbers are checked against the text sent.
 */
export const keepBodyText: preParsingHookHandler = function keepBodyText(request, _reply, payload, done) {
  if (!isJsonMediaType(request.headers['content-type'])) return done(null, payload);
  const chunks: Buffer[] = [];
  // The payload is read only once the parser reads: a body no parser takes (415) is left to Node, which drains it.
  let reading = false;
  const tee = new Readable({
    read() {
      if (reading) return void payload.resume();
      reading = true;
      payload.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        if (!tee.push(chunk)) payload.pause();
      });
      payload.once('end', () => {
        texts.set(request, Buffer.concat(chunks));
        tee.push(null);
      });
      payload.once('error', (error) => tee.destroy(error));
    },
  });
  // Fastify compares Content-Length with what an earlier hook counted before changing the bytes, when one did.
  Object.defineProperty(tee, 'receivedEncodedLength', { get: () => payload.receivedEncodedLength });
  done(null, tee);
};

/** The bytes of `request`'s JSON body, once its parser has read them. */
export function bodyText(request: FastifyRequest): Buffer | undefined {
  return texts.get(request);
}
