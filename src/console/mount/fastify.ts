import { operatorConsole } from '../console.js';
import type { MountOptions } from './mount-options.js';
import { FORM_LIMIT_BYTES } from './mount-options.js';

/** The few members of a Fastify request the console uses. */
export interface FastifyConsoleRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body?: unknown;
}

/** The few members of a Fastify reply the console uses. */
export interface FastifyConsoleReply {
  code(status: number): FastifyConsoleReply;
  headers(values: Readonly<Record<string, string>>): FastifyConsoleReply;
  send(body: string): unknown;
}

/** The few members of a Fastify instance the plugin uses. */
export interface FastifyConsoleInstance {
  readonly prefix: string;
  addContentTypeParser(
    type: string,
    options: { parseAs: 'string'; bodyLimit: number },
    parser: (request: unknown, body: string, done: (error: Error | null, body?: unknown) => void) => void,
  ): void;
  route(options: {
    method: ('GET' | 'POST')[];
    url: string;
    handler: (request: FastifyConsoleRequest, reply: FastifyConsoleReply) => Promise<unknown>;
  }): unknown;
}

/**
 * The console as a Fastify plugin: `app.register(consoleFastify({...}), { prefix: '/ops' })`.
 * It reads its own urlencoded forms, inside its own scope only.
 */
export function consoleFastify<Tx>(
  options: MountOptions<Tx, FastifyConsoleRequest>,
): (instance: FastifyConsoleInstance) => Promise<void> {
  const handle = operatorConsole(options);
  return function retrysafeConsole(instance) {
    instance.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'string', bodyLimit: FORM_LIMIT_BYTES },
      (_request, body, done) => done(null, body),
    );
    const base = instance.prefix.replace(/\/$/, '');
    const serve = async (request: FastifyConsoleRequest, reply: FastifyConsoleReply) => {
      const url = new URL(request.url, 'http://console.invalid');
      const access = await options.authorize(request);
      const answer = await handle(
        {
          method: request.method,
          path: url.pathname.slice(base.length) || '/',
          query: url.searchParams,
          base,
          header: (name) => {
            const value = request.headers[name.toLowerCase()];
            return Array.isArray(value) ? value.join(', ') : value;
          },
          form: async () => Promise.resolve(new URLSearchParams(typeof request.body === 'string' ? request.body : '')),
        },
        access,
      );
      return reply.code(answer.status).headers(answer.headers).send(answer.body);
    };
    instance.route({ method: ['GET', 'POST'], url: '/', handler: serve });
    instance.route({ method: ['GET', 'POST'], url: '/*', handler: serve });
    return Promise.resolve();
  };
}
