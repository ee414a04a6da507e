import type { FastifyReply, FastifyRequest, RouteGenericInterface } from 'fastify';
import type { HandlerReply } from 'retrysafe';
import { orderProblem } from './problem.js';
import { respond } from './respond.js';

/** Bearer token → tenant. */
export type Tokens = ReadonlyMap<string, string>;

const BEARER = /^Bearer +([\x21-\x7e]+) *$/i;

/** The tenant of the caller's `Authorization: Bearer` token, or undefined when there is none or it is unknown. */
export function tenantOf(request: FastifyRequest, tokens: Tokens): string | undefined {
  const token = BEARER.exec(request.headers.authorization ?? '')?.[1];
  return token === undefined ? undefined : tokens.get(token);
}

/** A route handler that runs only for a known caller, and answers 401 problem+json otherwise. */
export function authenticated<Route extends RouteGenericInterface>(
  tokens: Tokens,
  handler: (request: FastifyRequest<Route>, tenant: string) => Promise<HandlerReply>,
): (request: FastifyRequest<Route>, reply: FastifyReply<Route>) => Promise<FastifyReply<Route>> {
  return async function authenticatedRoute(request: FastifyRequest<Route>, reply: FastifyReply<Route>) {
    const tenant = tenantOf(request, tokens);
    if (tenant === undefined) {
      return respond(
        reply,
        orderProblem('unauthenticated', 'Send "Authorization: Bearer <token>" with a known token.', {
          headers: { 'www-authenticate': 'Bearer' },
        }),
      );
    }
    return respond(reply, await handler(request, tenant));
  };
}
