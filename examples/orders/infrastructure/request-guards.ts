import type { FastifyInstance } from 'fastify';
import { orderProblem } from './problem.js';
import { respond } from './respond.js';

/**
 * Refuses, before any route, requests whose meaning the service would
 * otherwise have to guess: a body under a Content-Encoding it does not decode
 * (a plain body labelled gzip would be read as if it were not), and two
 * Authorization headers (Node keeps the first and drops the other silently).
 */
export function refuseAmbiguousRequests(app: FastifyInstance): void {
  app.addHook('onRequest', async (request, reply) => {
    const encoding = request.headers['content-encoding'];
    if (encoding !== undefined && encoding.trim().toLowerCase() !== 'identity') {
      return respond(
        reply,
        orderProblem(
          'unsupported-media-type',
          `Content-Encoding "${encoding}" is not supported: send the body unencoded.`,
        ),
      );
    }
    if (countHeader(request.raw.rawHeaders, 'authorization') > 1) {
      return respond(reply, orderProblem('request-invalid', 'Send one Authorization header, not several.'));
    }
  });
}

/** Lines of header `name` as sent: Node's parsed headers hide repeats of some headers. */
function countHeader(rawHeaders: readonly string[], name: string): number {
  let lines = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) if (rawHeaders[i]?.toLowerCase() === name) lines++;
  return lines;
}
