/**
 * A fake payment provider: a real HTTP server that behaves like a
 * well-behaved idempotent downstream, with switches to make it misbehave.
 *
 *   POST /v1/charges                          Idempotency-Key required, Fencing-Token optional
 *   GET  /v1/charges?idempotency_key=K        the charge made for K, or 404
 *   GET  /v1/charges/count?idempotency_key=K  { count }: how many times money moved for K
 *   GET  /v1/stats                            { charges, requests, held }
 *   POST /control                             add a fault (see faults.ts), {"mode":"release"} or {"mode":"reset"}
 *   GET  /control                             { faults }: the faults still active
 *   POST /control/clear-charges               forget every charge and fencing token
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { ChargeBook, parseChargeRequest, problemTypeBase, type ChargeOutcome } from './charges.js';
import { Faults, parseControl, type Fault } from './faults.js';
import { paymentSucceeded, webhookSender } from './webhooks.js';

export interface ProviderOptions {
  /** 0 (the default) picks a free port. */
  readonly port?: number;
  /** Defaults to 127.0.0.1. */
  readonly host?: string;
  /** A JSON file that holds the charges across restarts. Without it, state is in memory only. */
  readonly stateFile?: string;
  /** Faults active from the start. */
  readonly faults?: readonly Fault[];
  /** Where to POST `payment.succeeded` events; needs `webhookSecret`. */
  readonly webhookUrl?: string;
  /** `whsec_<base64>`. */
  readonly webhookSecret?: string;
  /** Waits between webhook attempts. Defaults to 0.5 s, 2 s, 5 s, 10 s. */
  readonly webhookRetryDelaysMs?: readonly number[];
  /** How long one webhook attempt may take before it is given up and retried. Defaults to 5 s. */
  readonly webhookTimeoutMs?: number;
}

export interface Provider {
  /** Base URL, without a trailing slash. */
  readonly url: string;
  readonly port: number;
  /** The ledger, for in-process assertions. */
  readonly book: ChargeBook;
  readonly faults: Faults;
  /** Stops listening, drops open connections and pending webhook retries. */
  close(): Promise<void>;
}

export async function startProvider(options: ProviderOptions = {}): Promise<Provider> {
  const book = new ChargeBook(options.stateFile);
  const faults = new Faults();
  for (const fault of options.faults ?? []) faults.add(fault);
  const lifetime = new AbortController();
  const sendWebhook = webhooksFrom(options, lifetime.signal);
  const held = new Set<() => void>();

  /** Resolves true once released, false if the provider closes first. */
  function holdUntilReleased(): Promise<boolean> {
    return new Promise((resolve) => {
      const release = (): void => {
        held.delete(release);
        lifetime.signal.removeEventListener('abort', closed);
        resolve(true);
      };
      const closed = (): void => {
        held.delete(release);
        resolve(false);
      };
      held.add(release);
      lifetime.signal.addEventListener('abort', closed, { once: true });
    });
  }
  const releaseHeld = (): void => {
    for (const release of [...held]) release();
  };

  async function postCharge(req: IncomingMessage, res: ServerResponse): Promise<void> {
    book.noteRequest();
    const key = req.headers['idempotency-key'];
    if (typeof key !== 'string' || key === '' || key.length > 255) {
      return problem(res, 400, 'idempotency-key-missing', 'Send an Idempotency-Key header of 1 to 255 characters.');
    }
    const fencingToken = parseFencingToken(req.headers['fencing-token']);
    if (fencingToken === null)
      return problem(res, 400, 'fencing-token-invalid', 'Fencing-Token must be a non-negative integer.');
    const body = await readJson(req);
    const request = parseChargeRequest(body);
    if (typeof request === 'string') return problem(res, 400, 'request-invalid', request);

    if (faults.take('hold', request.reference) !== undefined && !(await holdUntilReleased())) {
      return void res.destroy();
    }
    const delay = faults.take('delay', request.reference);
    if (delay !== undefined) {
      const closed = await sleep(delay.ms, false, { signal: lifetime.signal }).catch(() => true);
      if (closed) return void res.destroy();
    }
    if (faults.take('fail-before-charge', request.reference) !== undefined) {
      res.setHeader('retry-after', '1');
      return problem(res, 503, 'unavailable', 'Injected failure: nothing was charged.');
    }

    const outcome = book.charge(key, request, fencingToken);
    if (outcome.kind === 'created') sendWebhook?.(paymentSucceeded(outcome.charge));
    if (faults.take('charge-then-drop', request.reference) !== undefined) return void req.socket.destroy();
    answerCharge(res, outcome);
  }

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://provider');
    const key = url.searchParams.get('idempotency_key');
    switch (`${req.method} ${url.pathname}`) {
      case 'POST /v1/charges':
        return postCharge(req, res);
      case 'GET /v1/charges': {
        if (key === null) return problem(res, 400, 'request-invalid', 'Give the idempotency_key query parameter.');
        if (faults.take('fail-lookup', key) !== undefined)
          return problem(res, 503, 'unavailable', 'Injected failure: the lookup cannot tell.');
        const charge = book.lookup(key);
        return charge === undefined
          ? problem(res, 404, 'charge-not-found', `No charge for key ${key}.`)
          : json(res, 200, charge);
      }
      case 'GET /v1/charges/count':
        if (key === null) return problem(res, 400, 'request-invalid', 'Give the idempotency_key query parameter.');
        return json(res, 200, { count: book.count(key) });
      case 'GET /v1/stats': {
        const { charges, requests } = book.stats();
        return json(res, 200, { charges, requests, held: held.size });
      }
      case 'GET /control':
        return json(res, 200, { faults: faults.list() });
      case 'POST /control': {
        const control = parseControl(await readJson(req));
        if (typeof control === 'string') return problem(res, 400, 'request-invalid', control);
        if (control.mode === 'reset') {
          faults.reset();
          releaseHeld();
        } else if (control.mode === 'release') releaseHeld();
        else faults.add(control);
        return json(res, 200, { faults: faults.list() });
      }
      case 'POST /control/clear-charges':
        book.clear();
        return json(res, 200, book.stats());
      default:
        return problem(res, 404, 'not-found', `No route for ${req.method} ${url.pathname}.`);
    }
  }

  const server = createServer((req, res) => {
    route(req, res).catch((error: unknown) => {
      if (error instanceof BadJson) return problem(res, 400, 'request-invalid', 'Body must be JSON.');
      if (res.headersSent) return void res.destroy();
      problem(res, 500, 'internal', String(error));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;

  return {
    url: `http://${host}:${address.port}`,
    port: address.port,
    book,
    faults,
    close: () =>
      new Promise<void>((resolve) => {
        lifetime.abort();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function answerCharge(res: ServerResponse, outcome: ChargeOutcome): void {
  switch (outcome.kind) {
    case 'created':
      return json(res, 201, outcome.charge);
    case 'replayed':
      res.setHeader('idempotent-replayed', 'true');
      return json(res, 200, outcome.charge);
    case 'key-reused':
      return problem(
        res,
        422,
        'idempotency-key-reused',
        `Key was used for a different request (charge ${outcome.charge.id}).`,
      );
    case 'stale-token':
      return problem(
        res,
        409,
        'stale-fencing-token',
        `A newer fencing token (${outcome.highest}) was seen for this key.`,
      );
  }
}

function webhooksFrom(options: ProviderOptions, signal: AbortSignal): ReturnType<typeof webhookSender> | undefined {
  if (options.webhookUrl === undefined) return undefined;
  if (options.webhookSecret === undefined) throw new Error('webhookUrl needs webhookSecret');
  return webhookSender({
    url: options.webhookUrl,
    secret: options.webhookSecret,
    retryDelaysMs: options.webhookRetryDelaysMs ?? [500, 2_000, 5_000, 10_000],
    timeoutMs: options.webhookTimeoutMs ?? 5_000,
    signal,
  });
}

/** The token, undefined when absent (no check), null when malformed. */
function parseFencingToken(header: string | string[] | undefined): number | undefined | null {
  if (header === undefined) return undefined;
  return typeof header === 'string' && /^\d{1,15}$/.test(header) ? Number(header) : null;
}

class BadJson extends Error {}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  try {
    return text === '' ? undefined : JSON.parse(text);
  } catch {
    throw new BadJson();
  }
}

function json(res: ServerResponse, status: number, body: unknown, contentType = 'application/json'): void {
  res.writeHead(status, { 'content-type': contentType }).end(JSON.stringify(body));
}

function problem(res: ServerResponse, status: number, code: string, detail: string): void {
  json(res, status, { type: `${problemTypeBase}${code}`, status, detail }, 'application/problem+json');
}
