import { pipeline, Transform } from 'node:stream';
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
  const tee = new Transform({
    transform(chunk: Buffer, _encoding, next) {
      chunks.push(chunk);
      next(null, chunk);
    },
    flush(next) {
      texts.set(request, Buffer.concat(chunks));
      next();
    },
  });
  // Fastify compares Content-Length with what an earlier hook counted before changing the bytes, when one did.
  Object.defineProperty(tee, 'receivedEncodedLength', { get: () => payload.receivedEncodedLength });
  // A payload that fails fails the tee, which the parser reports.
  done(null, pipeline(payload, tee, () => {}));
};

/** The bytes of `request`'s JSON body, once its parser has read them. */
export function bodyText(request: FastifyRequest): Buffer | undefined {
  return texts.get(request);
}
