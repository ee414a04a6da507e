import type { FastifyRequest, preParsingHookHandler } from 'fastify';
import { isJsonMediaType } from '../../core/json-text.js';

/**
 * Where a request keeps its JSON body's bytes: the chunks its parser read, on
 * the request itself, joined only when there are several. Copying every body
 * into a new Buffer when it ended cost a cached replay a tenth of its CPU in
 * the garbage collector.
 */
const BODY_TEXT = Symbol('retrysafe.bodyText');

type WithBodyText = FastifyRequest & { [BODY_TEXT]?: Buffer[] };

/**
 * A retrysafe route's `preParsing` hook: keeps the bytes of a JSON body as
 * they flow to the route's parser, whichever parser that is and after the
 * application's own hooks (one that inflates the body, say), so that the
 * numbers are checked against the text sent.
 */
export const keepBodyText: preParsingHookHandler = function keepBodyText(request: WithBodyText, _reply, payload, done) {
  if (!isJsonMediaType(request.headers['content-type'])) return done(null, payload);
  const chunks: Buffer[] = [];
  request[BODY_TEXT] = chunks;
  // Paused first, so that listening does not start the flow: the chunks are kept as the parser reads them
  // (it resumes the payload), and a body no parser takes (415) is left to Node, which drops the listener and drains it.
  payload.pause();
  // An application's hook before this one may hand the body on as text, which Fastify's parsers take too.
  payload.on('data', (chunk: Buffer | string) => chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk));
  done(null, payload);
};

/** The bytes of `request`'s JSON body: whole once its parser has read them, as it has before any handler runs. */
export function bodyText(request: WithBodyText): Buffer | undefined {
  const chunks = request[BODY_TEXT];
  return chunks === undefined || chunks.length === 1 ? chunks?.[0] : Buffer.concat(chunks);
}
