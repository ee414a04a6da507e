import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { fingerprint, type Fingerprint, sameFingerprint } from '../../../src/core/fingerprint.js';
import { parseIdempotencyKey } from '../../../src/core/key.js';
import { type Listening, listen } from './listen.js';

/**
 * The one mistake a toy server makes, each a known way to get idempotency keys wrong:
 * - `check-then-insert`: looks the key up, awaits, then records it, so concurrent duplicates all run;
 * - `global-keys`: records keys without the tenant, so another tenant's same key replays the first's answer;
 * - `body-blind`: replays whatever body a reused key comes with;
 * - `byte-fingerprint`: takes the fingerprint over the body's bytes, so the same JSON written otherwise is refused 422;
 * - `stores-refusal`: stores its 422 for a reused key in the original's place, so the original body is refused from then on;
 * - `runs-on-replay`: replays a completed key's answer, then creates another order all the same;
 * - `any-key`: accepts missing, empty, long, non-ASCII and repeated keys;
 * - `lossy-replay`: replays a re-encoded body without the stored Location;
 * - `cold-race`: checks, awaits, then records only for every other new key (a cold cache, say), so one burst may miss it;
 * - `forgets-on-hang-up`: records the answer once it is sent, and drops the key when the client hangs up first;
 * - `replays-cookie`: stores the answer's Set-Cookie and replays it;
 * - `principal-blind`: records keys per tenant, so another user of the tenant gets the first user's answer;
 * - `replays-to-revoked`: looks the key up before the credential, so a revoked credential still gets the replay;
 * - `reruns-expired`: forgets an expired key and runs it again as a new operation, instead of the documented 410;
 * - `spec-without-expiry`: links its refusals to a specification page that states no expiry;
 * - `dead-spec-link`: links its refusals to a specification that is not there.
 */
export type Flaw =
  | 'none'
  | 'check-then-insert'
  | 'global-keys'
  | 'body-blind'
  | 'byte-fingerprint'
  | 'stores-refusal'
  | 'runs-on-replay'
  | 'any-key'
  | 'lossy-replay'
  | 'cold-race'
  | 'forgets-on-hang-up'
  | 'replays-cookie'
  | 'principal-blind'
  | 'replays-to-revoked'
  | 'reruns-expired'
  | 'spec-without-expiry'
  | 'dead-spec-link';

/** Who a bearer token stands for: two users of tenant a, one of tenant b, and a revoked token of a's first user. */
const principals: Readonly<
  Record<string, { readonly tenant: string; readonly user: string; readonly revoked?: true }>
> = {
  'Bearer demo-a': { tenant: 'a', user: 'a1' },
  'Bearer demo-a2': { tenant: 'a', user: 'a2' },
  'Bearer demo-b': { tenant: 'b', user: 'b1' },
  'Bearer demo-a-revoked': { tenant: 'a', user: 'a1', revoked: true },
};

export interface ToyOptions {
  readonly flaw?: Flaw;
  /** How long creating an order takes, so duplicates meet a running first attempt. Default 100 ms. */
  readonly workMs?: number;
  /** One order per (tenant, sku): a second key for the same sku gets 409 without Retry-After. */
  readonly uniqueSku?: boolean;
  /**
   * How many requests whose client hung up it drops unrun, as a busy server does that reads a body only after the
   * client's close: while any are left to drop, it waits up to `HANG_UP_WAIT_MS` for the client of each request to
   * hang up before reading its body. The slow client gives up too: a check against such a toy sets `abandonAfterMs`
   * above that wait, so that only the lost-response probe's hang-ups are dropped.
   */
  readonly dropsHungUp?: number;
}

interface Order {
  readonly id: number;
  readonly tenant: string;
  readonly sku: string;
  readonly qty: number;
}

interface Stored {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

type KeyRecord =
  | { readonly fingerprint: Fingerprint; readonly state: 'in_progress' }
  | { readonly fingerprint: Fingerprint; readonly state: 'completed'; readonly reply: Stored }
  /** The response was pruned; what it created is still known. */
  | { readonly fingerprint: Fingerprint; readonly state: 'expired'; readonly location: string | undefined };

/** A toy server, and what a test may do to its records. */
export interface ToyServer extends Listening {
  /** Prunes the stored response of every record of `key`, as its retention passing would. */
  expire(key: string): void;
}

/**
 * How long a request waits for its client to hang up while the toy has hang-ups to drop. It waits for the close
 * itself, not a fixed pause after which it looks: with a pause of 20 ms, on a loaded machine a hang-up's close came
 * later and its request ran, or the slow client's give-up after its own 20 ms came first and was dropped in its place.
 */
export const HANG_UP_WAIT_MS = 1_000;

/** The page the toy's refusals link to. */
const SPEC_PATH = '/idempotency';

/** A small in-memory orders endpoint on plain node:http, correct unless given a flaw. */
export async function startToyServer(options: ToyOptions = {}): Promise<ToyServer> {
  const flaw = options.flaw ?? 'none';
  const workMs = options.workMs ?? 100;
  const orders: Order[] = [];
  const records = new Map<string, KeyRecord>();
  const seen = new Map<string, number>();
  let hungUpToDrop = options.dropsHungUp ?? 0;

  async function create(
    req: IncomingMessage,
    res: ServerResponse,
    principal: (typeof principals)[string],
  ): Promise<void> {
    const { tenant, user } = principal;
    if (hungUpToDrop > 0 && (await hungUpWithin(req, HANG_UP_WAIT_MS))) {
      hungUpToDrop -= 1;
      return void res.destroy();
    }
    const text = await readBody(req);
    const input = parseOrder(text);
    if (input === undefined) return send(res, { status: 400, headers: json, body: '{"error":"bad order"}' });
    const parsed = parseIdempotencyKey(req.headersDistinct['idempotency-key']);
    if (!parsed.ok && flaw !== 'any-key')
      return send(res, { status: 400, headers: refusal, body: JSON.stringify({ error: parsed.defect }) });
    const key = parsed.ok ? parsed.key : String(req.headersDistinct['idempotency-key'] ?? '');
    const scope =
      flaw === 'global-keys' ? key : flaw === 'principal-blind' ? `${tenant}\n${key}` : `${tenant}\n${user}\n${key}`;
    const print = fingerprint(flaw === 'byte-fingerprint' ? text : input);
    const existing = records.get(scope);
    if (principal.revoked === true && (flaw !== 'replays-to-revoked' || existing?.state !== 'completed'))
      return send(res, unauthenticated);
    // Only these flaws leave a gap between looking the key up and recording it.
    if (existing === undefined && (flaw === 'check-then-insert' || (flaw === 'cold-race' && ordinal(scope) % 2 === 0)))
      await sleep(workMs);
    if (existing !== undefined) {
      if (flaw !== 'body-blind' && !sameFingerprint(existing.fingerprint, print)) {
        const reused: Stored = { status: 422, headers: refusal, body: '{"error":"key reused"}' };
        if (flaw === 'stores-refusal') records.set(scope, { fingerprint: print, state: 'completed', reply: reused });
        return send(res, reused);
      }
      if (existing.state === 'in_progress')
        return send(res, {
          status: 409,
          headers: { ...refusal, 'retry-after': '1' },
          body: '{"error":"in progress"}',
        });
      if (existing.state === 'completed') {
        send(res, replay(existing.reply));
        if (flaw === 'runs-on-replay') orders.push({ id: orders.length + 1, tenant, sku: input.sku, qty: input.qty });
        return;
      }
      if (flaw !== 'reruns-expired') {
        const headers: Record<string, string> = { ...json };
        if (existing.location !== undefined) headers.location = existing.location;
        return send(res, { status: 410, headers, body: '{"error":"response expired"}' });
      }
    }
    records.set(scope, { fingerprint: print, state: 'in_progress' });
    if (flaw === 'forgets-on-hang-up') res.once('close', () => res.writableFinished || records.delete(scope));
    await sleep(workMs);
    if (options.uniqueSku === true && orders.some((o) => o.tenant === tenant && o.sku === input.sku)) {
      records.delete(scope);
      return send(res, { status: 409, headers: json, body: '{"error":"order-exists"}' });
    }
    const order = { id: orders.length + 1, tenant, sku: input.sku, qty: input.qty };
    orders.push(order);
    const reply = {
      status: 201,
      headers: { ...json, location: `/orders/${order.id}` },
      body: JSON.stringify({ id: order.id, sku: order.sku, qty: order.qty }),
    };
    const cookie = { 'set-cookie': `session=${user}-${order.id}; HttpOnly` };
    const completed = {
      fingerprint: print,
      state: 'completed',
      reply: flaw === 'replays-cookie' ? { ...reply, headers: { ...reply.headers, ...cookie } } : reply,
    } as const;
    if (flaw === 'forgets-on-hang-up') res.once('finish', () => records.set(scope, completed));
    else records.set(scope, completed);
    send(res, { ...reply, headers: { ...reply.headers, ...cookie } });
  }

  /** The order in which keys were first seen, from 1. */
  function ordinal(scope: string): number {
    if (!seen.has(scope)) seen.set(scope, seen.size + 1);
    return seen.get(scope) ?? 0;
  }

  function replay(stored: Stored): Stored {
    const marked: Record<string, string> = { ...stored.headers, 'idempotent-replayed': 'true' };
    if (flaw !== 'lossy-replay') return { ...stored, headers: marked };
    const { location: _dropped, ...rest } = marked;
    return { status: stored.status, headers: rest, body: JSON.stringify(JSON.parse(stored.body), null, 2) };
  }

  const server = createServer((req, res) => {
    const principal = principals[req.headers.authorization ?? ''];
    if (principal === undefined) return send(res, unauthenticated);
    const { tenant } = principal;
    const url = new URL(req.url ?? '/', 'http://toy');
    // A client that hung up before its body arrived leaves nothing to answer.
    if (req.method === 'POST' && url.pathname === '/orders')
      return void create(req, res, principal).catch(() => res.destroy());
    if (principal.revoked === true) return send(res, unauthenticated);
    if (req.method === 'GET' && url.pathname === SPEC_PATH && flaw !== 'dead-spec-link') {
      const expiry = flaw === 'spec-without-expiry' ? '' : '<p>A key expires 30 days after its first use.</p>';
      return send(res, { status: 200, headers: { 'content-type': 'text/html' }, body: `<h1>Keys</h1>${expiry}` });
    }
    if (req.method === 'GET' && url.pathname === '/orders') {
      const sku = url.searchParams.get('sku');
      const listed = orders.filter((o) => o.tenant === tenant && (sku === null || o.sku === sku));
      return send(res, { status: 200, headers: json, body: JSON.stringify({ orders: listed }) });
    }
    send(res, { status: 404, headers: json, body: '{"error":"not found"}' });
  });
  const listening = await listen(server);
  return {
    ...listening,
    expire(key) {
      for (const [scope, record] of records) {
        if (!scope.endsWith(`\n${key}`) && scope !== key) continue;
        if (record.state === 'completed')
          records.set(scope, {
            fingerprint: record.fingerprint,
            state: 'expired',
            location: record.reply.headers.location,
          });
      }
    },
  };
}

/** An order of the first user made with `key`, then its response pruned as its retention passing would. */
export async function expiredOrder(toy: ToyServer, key: string, body: string): Promise<void> {
  const made = await fetch(`${toy.origin}/orders`, {
    method: 'POST',
    headers: { authorization: 'Bearer demo-a', 'content-type': 'application/json', 'idempotency-key': key },
    body,
  });
  if (made.status !== 201) throw new Error(`the order for an expired key got ${made.status}`);
  toy.expire(key);
}

const json = { 'content-type': 'application/json' };
/** retrysafe's refusals link to the specification, as the draft shows; so do the toy's. */
const refusal = { ...json, link: `<${SPEC_PATH}>; rel="describedby"` };
const unauthenticated: Stored = { status: 401, headers: json, body: '{"error":"unauthenticated"}' };

function send(res: ServerResponse, reply: Stored): void {
  res.writeHead(reply.status, reply.headers).end(reply.body);
}

/** Whether the client hung up within `ms`, resolved as soon as it does. */
function hungUpWithin(req: IncomingMessage, ms: number): Promise<boolean> {
  if (req.destroyed) return Promise.resolve(true);
  return new Promise((resolve) => {
    const closed = (): void => {
      clearTimeout(timer);
      resolve(true);
    };
    const timer = setTimeout(() => {
      req.off('close', closed);
      resolve(req.destroyed);
    }, ms);
    req.once('close', closed);
  });
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function parseOrder(text: string): { readonly sku: string; readonly qty: number } | undefined {
  try {
    const body = JSON.parse(text) as { sku?: unknown; qty?: unknown };
    return typeof body.sku === 'string' && typeof body.qty === 'number' ? { sku: body.sku, qty: body.qty } : undefined;
  } catch {
    return undefined;
  }
}
