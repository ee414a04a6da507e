/**
 * What a framework adapter is built from (`retrysafe/adapter`): turn the
 * framework's request into an `IncomingRequest`, run the route, and send the
 * `Reply` back exactly. See docs/api.md for a whole adapter in one page.
 */
export { atomicRunner, leasedRunner, type RouteRunner } from './route-runner.js';
export {
  beginTransparent,
  capturedReply,
  type CapturedHeaders,
  type TransparentAttempt,
  type TransparentStart,
} from '../../modes/begin-transparent.js';
export { payloadBytes } from './payload-bytes.js';
export { publishRoute, specificationPaths, specificationReply } from '../../modes/published-specification.js';
export { sendReply, toResponse, type ResponseSink } from './send-reply.js';
export { toReply, type HandlerReply, type Reply } from '../../core/answer/reply.js';
export type { IncomingRequest } from '../../core/route.js';
