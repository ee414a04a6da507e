import type { FastifyReply, FastifyRequest, RouteGenericInterface } from 'fastify';
import type { HandlerReply } from 'retrysafe';
import { orderProblem } from './problem.js';
import { respond } from './respond.js';

/** Bearer token → tenant. */
export type Tokens = ReadonlyMap<string, string>;

const BEARER = /^Bearer +([\x21-\x7e]+) *$/i;

/** The tenant of the caller's `Authorization: Bearer` token, or undefined when there is none or it is unknown. */
export function tenantOf(request: FastifyRequest, tokens: Tokens): string | undefined {
  const token = principalOf(request);
  return token === undefined ? undefined : tokens.get(token);
}

/**
 * The caller's bearer token, which stands for one user of its tenant here
 * (your identity provider's user id goes here): another user of the tenant
 * who sends the same key is refused, never given the first user's answer.
 */
export function principalOf(request: FastifyRequest): string | undefined {
  return BEARER.exec(request.headers.authorization ?? '')?.[1];
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
