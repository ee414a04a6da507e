import { operatorConsole } from '../console.js';
import type { MountOptions } from './mount-options.js';
import { FORM_LIMIT_BYTES } from './mount-options.js';

/**
 * The console as a web-standard `(Request) => Promise<Response>` handler
 * (Hono, Next.js route handlers, Bun, Deno), answering below `basePath`.
 */
export function consoleFetch<Tx>(
  options: MountOptions<Tx, Request> & { readonly basePath?: string },
): (request: Request) => Promise<Response> {
  const handle = operatorConsole(options);
  const base = (options.basePath ?? '').replace(/\/$/, '');
  return async function retrysafeConsole(request) {
    const url = new URL(request.url);
    const path = url.pathname.startsWith(base) ? url.pathname.slice(base.length) || '/' : url.pathname;
    const answer = await handle(
      {
        method: request.method,
        path,
        query: url.searchParams,
        base,
        header: (name) => request.headers.get(name) ?? undefined,
        form: async () => {
          const text = await request.text();
          return new URLSearchParams(text.length > FORM_LIMIT_BYTES ? '' : text);
        },
      },
      await options.authorize(request),
    );
    return new Response(answer.status === 303 || request.method === 'HEAD' ? null : answer.body, {
      status: answer.status,
      headers: answer.headers,
    });
  };
}
