import type { IncomingMessage, ServerResponse } from 'node:http';
import { type ConsoleHandler, operatorConsole } from '../console.js';
import { FORM_LIMIT_BYTES, type MountOptions } from './mount-options.js';

/** The request as Node's http module, Express and Koa carry it; a body parser may have read the form already. */
export interface NodeConsoleRequest extends IncomingMessage {
  readonly body?: unknown;
  /** Express: where the router is mounted. */
  readonly baseUrl?: string;
}

/**
 * The console as a `(req, res)` handler for Node's http module and for
 * Express (`app.use('/ops', consoleNode(...))`: Express's mount point is read
 * from `req.baseUrl`).
 */
export function consoleNode<Tx>(
  options: MountOptions<Tx, NodeConsoleRequest> & { readonly basePath?: string },
): (req: NodeConsoleRequest, res: ServerResponse) => Promise<void> {
  const handle = operatorConsole(options);
  return async function retrysafeConsole(req, res) {
    try {
      await serveNode(handle, req, res, req.baseUrl ?? options.basePath ?? '', await options.authorize(req));
    } catch {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' });
      res.end('The console failed.');
    }
  };
}

/** Answers one Node request through the console; `base` is where it is mounted. */
export async function serveNode(
  handle: ConsoleHandler,
  req: NodeConsoleRequest,
  res: ServerResponse,
  base: string,
  access: Parameters<ConsoleHandler>[1],
): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://console.invalid');
  const trimmed = base.replace(/\/$/, '');
  const path =
    trimmed !== '' && url.pathname.startsWith(trimmed) && req.baseUrl === undefined
      ? url.pathname.slice(trimmed.length) || '/'
      : url.pathname;
  const answer = await handle(
    {
      method: req.method ?? 'GET',
      path,
      query: url.searchParams,
      base: trimmed,
      header: (name) => {
        const value = req.headers[name.toLowerCase()];
        return Array.isArray(value) ? value.join(', ') : value;
      },
      form: () => readForm(req),
    },
    access,
  );
  res.writeHead(answer.status, answer.headers);
  res.end(req.method === 'HEAD' ? undefined : answer.body);
}

/** The urlencoded form: parsed already by a body parser, or read here from the stream. */
async function readForm(req: NodeConsoleRequest): Promise<URLSearchParams> {
  if (typeof req.body === 'object' && req.body !== null && !Buffer.isBuffer(req.body)) {
    return new URLSearchParams(
      Object.entries(req.body as Record<string, unknown>).filter(
        (entry): entry is [string, string] => typeof entry[1] === 'string',
      ),
    );
  }
  if (typeof req.body === 'string') return new URLSearchParams(req.body);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > FORM_LIMIT_BYTES) return new URLSearchParams();
    chunks.push(chunk);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}
