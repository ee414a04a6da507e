export {
  atomic,
  leased,
  specification,
  transparent,
  type RouteHandlerOptions,
  type TransparentHooks,
} from './fastify.js';
