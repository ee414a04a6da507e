import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { HandlerReply } from 'retrysafe';
import { orderProblem, OrderProblemError } from './problem.js';
import { respond } from './respond.js';

/**
 * Every answer the framework gives on its own, as problem+json: its errors
 * (unreadable or oversized bodies, unsupported media types, bad URLs), unknown
 * routes, and unexpected errors, which are logged and never shown.
 */
export function useProblemErrors(app: FastifyInstance): void {
  app.setErrorHandler(renderError);
  app.setNotFoundHandler((request, reply) =>
    respond(reply, orderProblem('not-found', `There is no ${request.method} ${request.url.split('?')[0] ?? ''}.`)),
  );
}

/** Also Fastify's `frameworkErrors` option, for the errors raised before routing. */
export function renderError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  respond(reply, problemFor(error, request));
}

function problemFor(error: FastifyError, request: FastifyRequest): HandlerReply {
  if (error instanceof OrderProblemError) {
    request.log.warn({ err: error }, error.message);
    return error.reply;
  }
  const status = typeof error.statusCode === 'number' ? error.statusCode : 500;
  // Fastify's own client-error messages describe the request; anything else might describe the server.
  const ours = typeof error.code === 'string' && error.code.startsWith('FST_');
  if (status >= 400 && status < 500) {
    const detail = ours ? error.message : 'The request could not be processed.';
    switch (status) {
      case 404:
        return orderProblem('not-found', detail);
      case 413:
        return orderProblem('body-too-large', detail);
      case 415:
        return orderProblem('unsupported-media-type', 'Send the body as application/json.');
      default:
        return orderProblem(ours && error.code.startsWith('FST_ERR_CTP_') ? 'body-invalid' : 'request-invalid', detail);
    }
  }
  request.log.error({ err: error }, 'request failed');
  return orderProblem(
    'internal-error',
    'The request failed unexpectedly. It is safe to retry with the same Idempotency-Key.',
  );
}
