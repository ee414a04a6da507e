import type { IncomingMessage } from 'node:http';
import type { Middleware } from 'koa';
import { isJsonMediaType } from '../../core/json-text.js';

/** Where a request keeps its JSON body's bytes, as its body parser reads them. */
const BODY_BYTES = Symbol('retrysafe.bodyBytes');

type WithBodyBytes = IncomingMessage & { [BODY_BYTES]?: Buffer[] };

/**
 * A Koa middleware, put before the body parser, that keeps a JSON body's bytes
 * as the parser reads them: `@koa/bodyparser` keeps only the text it decoded,
 * in which bytes that are not UTF-8 already read as U+FFFD. Listening starts
 * with the parser's own `data` listener, so the stream flows when it would
 * have and no chunk goes by unseen. A compressed body is left out: its bytes
 * are not the text, and the parser's decoded text stands in for them.
 */
export const keepRawBody: Middleware = function keepRawBody(ctx, next) {
  const req: WithBodyBytes = ctx.req;
  if (!isJsonMediaType(ctx.get('content-type')) || !['', 'identity'].includes(ctx.get('content-encoding')))
    return next();
  const tap = (event: string | symbol): void => {
    if (event !== 'data') return;
    req.off('newListener', tap);
    const chunks: Buffer[] = [];
    req[BODY_BYTES] = chunks;
    req.on('data', (chunk: Buffer | string) => chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk));
  };
  req.on('newListener', tap);
  return next();
};

/** The bytes of `req`'s JSON body, when `keepRawBody` saw them read. */
export function keptBody(req: IncomingMessage): Buffer | undefined {
  const chunks = (req as WithBodyBytes)[BODY_BYTES];
  return chunks === undefined || chunks.length === 1 ? chunks?.[0] : Buffer.concat(chunks);
}
