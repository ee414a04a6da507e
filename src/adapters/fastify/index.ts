export { atomic, leased, transparent, type RouteHandlerOptions, type TransparentHooks } from './fastify.js';
