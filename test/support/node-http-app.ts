import { createServer, type IncomingMessage } from 'node:http';
import type { HttpHandler } from './node-http-adapter.js';
import { listen, type Listening } from './listen.js';
import type { ErrorAnswer } from './nest-apps.js';

/** Serves `routes` (by `METHOD /path`) on Node's `http` server; a rejected handler is recorded in `errors` and answered as `onError` says. */
export function serveHttp(
  routes: Readonly<Record<string, HttpHandler>>,
  errors: unknown[],
  onError: ErrorAnswer,
): Promise<Listening> {
  return listen(
    createServer((req, res) => {
      const route = routes[`${req.method ?? ''} ${pathOf(req)}`];
      if (route === undefined) return void res.writeHead(404).end();
      route(req, res).catch((error: unknown) => {
        errors.push(error);
        const { status, body } = onError(error);
        if (!res.headersSent) res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      });
    }),
  );
}

function pathOf(req: IncomingMessage): string {
  return new URL(req.url ?? '/', 'http://localhost').pathname;
}
