import type { ServerResponse } from 'node:http';
import { operatorConsole } from '../console.js';
import type { MountOptions } from './mount-options.js';
import { type NodeConsoleRequest, serveNode } from './node.js';

/** The few members of Koa's context the console uses. */
export interface KoaConsoleContext {
  readonly path: string;
  readonly req: NodeConsoleRequest;
  readonly res: ServerResponse;
  readonly request: { readonly body?: unknown };
  respond?: boolean;
}

/**
 * The console as Koa middleware answering below `basePath` (default
 * `/console`); other paths go on to `next`. A form a body parser read already
 * is taken from `ctx.request.body`.
 */
export function consoleKoa<Tx>(
  options: MountOptions<Tx, KoaConsoleContext> & { readonly basePath?: string },
): (ctx: KoaConsoleContext, next: () => Promise<unknown>) => Promise<unknown> {
  const handle = operatorConsole(options);
  const base = (options.basePath ?? '/console').replace(/\/$/, '');
  return async function retrysafeConsole(ctx, next) {
    if (ctx.path !== base && !ctx.path.startsWith(`${base}/`)) return next();
    const access = await options.authorize(ctx);
    ctx.respond = false;
    const req: NodeConsoleRequest = Object.assign(
      ctx.req,
      ctx.request.body === undefined ? {} : { body: ctx.request.body },
    );
    await serveNode(handle, req, ctx.res, base, access);
    return undefined;
  };
}
