import { setTimeout as sleep } from 'node:timers/promises';
import { call, type HttpAnswer } from '../../../examples/orders/testing/http.js';
import { waitFor } from '../../support/wait-for.js';

/** What one attempt got: an HTTP answer, a network error, or nothing within the bound. */
export type Attempt =
  | { readonly kind: 'answer'; readonly answer: HttpAnswer; readonly service: string }
  | { readonly kind: 'network-error'; readonly message: string; readonly service: string }
  | { readonly kind: 'hang'; readonly service: string };

/** Every attempt one client made for one key, until a final answer. */
export interface KeyHistory {
  readonly key: string;
  readonly attempts: Attempt[];
  /** The final answer, when the client got one. */
  final?: HttpAnswer;
}

export interface StormOptions {
  /** The services, tried in turn: a client moves to the next one after each attempt. */
  readonly services: () => readonly string[];
  readonly keys: readonly string[];
  /** Clients per key, sending at the same time. */
  readonly clientsPerKey: number;
  readonly send: (service: string, key: string) => Promise<HttpAnswer>;
  /** An attempt with no answer after this long counts as a hang. */
  readonly hangMs?: number;
  /** A client gives up after this long. */
  readonly settleWithinMs?: number;
  /** Clients start at random moments over this period, so that the storm lasts. */
  readonly spreadMs?: number;
}

/** A storm under way. */
export interface Storm {
  /** How many clients have their final answer so far. */
  finals(): number;
  /** Resolves once every client has its final answer or gave up. */
  readonly done: Promise<KeyHistory[]>;
}

/** Answers a client retries with the same key: the store or the database was down, or the operation still runs (409 with Retry-After). */
export function retryable(answer: HttpAnswer): boolean {
  return answer.status === 503 || (answer.status === 409 && answer.headers['retry-after'] !== undefined);
}

/**
 * Clients that keep their key: each sends, and on a network error or a
 * retryable answer waits a little and sends again, until a final answer.
 */
export function storm(options: StormOptions): Storm {
  const { keys, clientsPerKey, send, hangMs = 30_000, settleWithinMs = 150_000, spreadMs = 0 } = options;
  const histories: KeyHistory[] = [];
  let finals = 0;
  const clients = keys.flatMap((key, keyIndex) =>
    Array.from({ length: clientsPerKey }, async (_, client) => {
      const history: KeyHistory = { key, attempts: [] };
      histories.push(history);
      await sleep(Math.floor(Math.random() * spreadMs));
      const deadline = Date.now() + settleWithinMs;
      for (let round = keyIndex + client; Date.now() < deadline; round += 1) {
        const services = options.services();
        const service = services[round % services.length] ?? '';
        const attempt = await attemptOnce(() => send(service, key), service, hangMs);
        history.attempts.push(attempt);
        if (attempt.kind === 'answer' && !retryable(attempt.answer)) {
          history.final = attempt.answer;
          finals += 1;
          return;
        }
        await sleep(200 + Math.floor(Math.random() * 200));
      }
    }),
  );
  return { finals: () => finals, done: Promise.all(clients).then(() => histories) };
}

/** Waits until `storm` has at least `count` final answers. */
export function afterFinals(running: Storm, count: number): Promise<void> {
  return waitFor(() => running.finals() >= count, { what: `${count} final answers`, limitMs: Infinity });
}

async function attemptOnce(send: () => Promise<HttpAnswer>, service: string, hangMs: number): Promise<Attempt> {
  let timer: NodeJS.Timeout | undefined;
  const hang = new Promise<Attempt>(
    (resolve) => (timer = setTimeout(() => resolve({ kind: 'hang', service }), hangMs)),
  );
  const sent = send().then(
    (answer): Attempt => ({ kind: 'answer', answer, service }),
    (error: unknown): Attempt => ({
      kind: 'network-error',
      message: error instanceof Error ? error.message : String(error),
      service,
    }),
  );
  try {
    return await Promise.race([sent, hang]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Every answer that was not a 201, nor a 503 or 409 with Retry-After: what a
 * client should never see. Network errors count too, except from `killed`,
 * a service the test killed on purpose.
 */
export function unexpectedAnswers(histories: readonly KeyHistory[], killed?: string): string[] {
  return histories.flatMap(({ key, attempts }) =>
    attempts.flatMap((attempt) => {
      if (attempt.kind === 'network-error' && attempt.service === killed) return [];
      if (attempt.kind !== 'answer')
        return [
          `${key}: ${attempt.kind}${attempt.kind === 'network-error' ? ` (${attempt.message})` : ''} from ${attempt.service}`,
        ];
      const { status, headers } = attempt.answer;
      if (status === 201) return [];
      if ((status === 503 || status === 409) && headers['retry-after'] !== undefined) return [];
      return [`${key}: ${status} ${attempt.answer.body.toString('utf8').slice(0, 200)}`];
    }),
  );
}

/** The bodies of every 201 a client saw, by key. */
export function successesByKey(histories: readonly KeyHistory[]): Map<string, Buffer[]> {
  const seen = new Map<string, Buffer[]>();
  for (const { key, attempts } of histories) {
    for (const attempt of attempts) {
      if (attempt.kind === 'answer' && attempt.answer.status === 201)
        seen.set(key, [...(seen.get(key) ?? []), attempt.answer.body]);
    }
  }
  return seen;
}

/** Puts one cart per key, version 1, for `tenant`'s token. */
export async function putCarts(service: string, carts: readonly string[], token = 'demo-a'): Promise<void> {
  for (const cart of carts) {
    const put = await call(service, 'PUT', `/v1/carts/${cart}`, {
      token,
      json: { items: [{ sku: 'GADGET-2', qty: 1 }] },
    });
    if (put.status !== 200) throw new Error(`PUT /v1/carts/${cart}: ${put.status} ${put.body.toString('utf8')}`);
  }
}

/** Places the order of `cart` with `key`. */
export function placeOrder(service: string, cart: string, key: string, token = 'demo-a'): Promise<HttpAnswer> {
  return call(service, 'POST', '/v1/orders', {
    token,
    key,
    json: { cart_id: cart, cart_version: 1, delivery_option: 'express' },
  });
}
