export {
  type ActionContext,
  type ActionResult,
  type OperatorAction,
  runOperatorAction,
} from '../operator/operator-actions.js';
export type { ActionConfig, OperatorTools, StoreHealth } from '../operator/operator-tools.js';
export type { ConsoleStores } from './console-tools.js';
export {
  type ConsoleAccess,
  type ConsoleHandler,
  type ConsoleOptions,
  type ConsoleRequest,
  type ConsoleResponse,
  type ConsoleSettings,
  operatorConsole,
} from './console.js';
export type { MountOptions } from './mount/mount-options.js';
export { consoleFetch } from './mount/fetch.js';
export { consoleNode, type NodeConsoleRequest } from './mount/node.js';
export { consoleKoa, type KoaConsoleContext } from './mount/koa.js';
export {
  consoleFastify,
  type FastifyConsoleInstance,
  type FastifyConsoleReply,
  type FastifyConsoleRequest,
} from './mount/fastify.js';
export { operatorStore } from '../postgres/postgres-operator-store.js';
export type * from '../store/operator-store.js';
