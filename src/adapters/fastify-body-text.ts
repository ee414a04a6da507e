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
  // Paused first, so that listening does not start the flow: the chunks are copied as the parser reads them
  // (it resumes the payload), and a body no parser takes (415) is left to Node, which drops the listeners and drains it.
  payload.pause();
  payload.on('data', (chunk: Buffer) => chunks.push(chunk));
  payload.once('end', () => texts.set(request, Buffer.concat(chunks)));
  done(null, payload);
};

/** The bytes of `request`'s JSON body, once its parser has read them. */
export function bodyText(request: FastifyRequest): Buffer | undefined {
  return texts.get(request);
}
