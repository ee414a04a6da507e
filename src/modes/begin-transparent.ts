import { randomUUID } from 'node:crypto';
import { answerExisting, answerStoreUnavailable } from '../core/answer/answers.js';
import { crashPoint } from '../core/crash-point.js';
import { isRetrysafeError } from '../core/errors.js';
import type { Idempotency } from './idempotency.js';
import { decideExisting } from '../core/answer/decision.js';
import { completionOf, isStoredStatus } from '../core/storage-policy.js';
import { prepare } from './prepare.js';
import { type HeaderValue, headerValue, problemReply, type Reply } from '../core/answer/reply.js';
import { problem, problemCatalogue } from '../core/answer/problems.js';
import type { IncomingRequest, TransparentFailure, TransparentRoute } from '../core/route.js';
import type { Lease, LeaseClaims, LeasedWrites, LeaseRenewal } from '../store/lease-store.js';

/** What transparent mode uses of the store: the claim, the lease keeper's renewals, the completion or `unknown`. */
type TransparentStore = LeaseClaims & LeaseRenewal & Pick<LeasedWrites<unknown>, 'completeLease' | 'markUnknown'>;
import { routeAttempt } from './route-attempt.js';
import { LeaseKeeper } from './lease-keeper.js';
import type { AttemptEnding, Settled } from './traced-attempt.js';

/**
 * How a request to a transparent route starts. Transparent mode is leased
 * mode for a route that writes its own response and has no steps: the claim
 * commits an `in_progress` record with a lease, the route runs while the lease
 * is renewed, and its whole answer is captured and stored before it is sent.
 */
export type TransparentStart =
  /** retrysafe answered (a refusal, a replay, 503): send this; the route does not run and nothing is stored. */
  | { readonly kind: 'answered'; readonly reply: Reply }
  /** No key to deduplicate on (a GET, or an optional key left out): the route runs as if retrysafe were not there. */
  | { readonly kind: 'unkeyed' }
  /** The identity is claimed: run the route, capture its answer, and `finish` or `fail` the attempt before sending anything. */
  | { readonly kind: 'claimed'; readonly attempt: TransparentAttempt };

/** Authenticates, reads the key and the input, and claims the identity; the adapter then runs the route or sends the answer. */
export function beginTransparent<Req, Input>(
  config: Idempotency<unknown, TransparentStore>,
  route: TransparentRoute<Req, Input>,
  incoming: IncomingRequest<Req>,
): Promise<TransparentStart> {
  // The span covers the claim: the route then runs in the framework's hands, and the answer's storing is a store span of its own.
  return routeAttempt(config, route, incoming.raw, 'transparent', (own, ending) =>
    claimTransparent(own, route, incoming, ending),
  );
}

async function claimTransparent<Req, Input>(
  config: Idempotency<unknown, TransparentStore>,
  route: TransparentRoute<Req, Input>,
  incoming: IncomingRequest<Req>,
  ending: AttemptEnding,
): Promise<TransparentStart> {
  const prepared = await prepare(config, route, incoming);
  if (prepared.kind === 'answered') return prepared;
  if (prepared.kind === 'unkeyed') return { kind: 'unkeyed' };
  const { identity } = prepared;
  try {
    crashPoint('before-claim');
    const claim = await config.store.claimLease({
      identity,
      fingerprint: prepared.fingerprint,
      principal: prepared.principal,
      // Nothing can run the route again, so its input is not kept.
      input: null,
      mode: 'transparent',
      ownerToken: randomUUID(),
      leaseSeconds: config.leaseSeconds,
    });
    if (claim.kind === 'existing') {
      return {
        kind: 'answered',
        reply: answerExisting(config, identity, decideExisting(claim.record, prepared.fingerprint, prepared.principal)),
      };
    }
    config.emit({ type: 'claimed', identity, mode: 'transparent' });
    crashPoint('after-claim');
    // The attempt ends when the route's answer is stored, after the claim returns.
    const end = ending.handOff();
    return { kind: 'claimed', attempt: new TransparentAttempt(config, claim.lease, route.onFailure ?? 'store', end) };
  } catch (error) {
    if (isRetrysafeError(error, 'store-unavailable'))
      return { kind: 'answered', reply: answerStoreUnavailable(config, identity, error) };
    throw error;
  }
}

/**
 * One claimed run of a transparent route. Its lease is renewed until the
 * attempt is finished or failed. Every write is conditional on the lease, so a
 * worker whose lease was taken over changes nothing. The route has run once
 * it is claimed, so its record is never deleted: its effects may have
 * happened, whatever it answers.
 */
export class TransparentAttempt {
  private readonly keeper: LeaseKeeper;
  private ended = false;

  constructor(
    private readonly config: Idempotency<unknown, TransparentStore>,
    private readonly lease: Lease,
    private readonly onFailure: TransparentFailure,
    private readonly end: (settled: Settled) => void,
  ) {
    this.keeper = new LeaseKeeper(config.store, lease, config.clock);
  }

  /**
   * Completes the operation with the route's answer. An answer the policy
   * would not keep (a 5xx, a transient status) came after the route ran, so
   * it is stored all the same, or the operation is kept `unknown`, as the
   * route's `onFailure` says. Resolves once the write is done: only then may
   * the answer be sent, so a retry right after it finds the record.
   *
   * Never throws. When the store fails here, the route's answer is sent all
   * the same: its effect has happened, and a 503 would tell the client it had
   * not. The record then stays `in_progress` with nobody renewing it; when the
   * lease runs out the recovery worker marks it `unknown`, and retries get
   * 409 meanwhile, never a second run.
   */
  async finish(reply: Reply): Promise<void> {
    if (!this.stop()) return;
    await this.store(reply);
    this.end({ kind: 'returned' });
  }

  private async store(reply: Reply): Promise<void> {
    const { config, lease } = this;
    const stored = isStoredStatus(reply.status, config.policy) || this.onFailure === 'store';
    config.emit({ type: 'finished', identity: lease.identity, mode: 'transparent', status: reply.status, stored });
    if (!stored)
      return this.markUnknown(
        `The route answered ${reply.status} after it may have had effects; whether they happened is not known.`,
      );
    crashPoint('before-complete');
    await this.complete(reply);
    crashPoint('after-complete');
  }

  /**
   * Runs the route and captures its answer (`reply`, with whatever else the
   * adapter needs to send it); resolves once it is finished, so it may be sent.
   * A throw is recorded as `fail` does, then goes on to the framework.
   */
  async capture<Captured extends { readonly reply: Reply }>(route: () => Promise<Captured>): Promise<Captured> {
    let captured: Captured;
    try {
      captured = await route();
    } catch (error) {
      await this.failed(error);
      throw error;
    }
    await this.finish(captured.reply);
    return captured;
  }

  /**
   * The route threw, after it may have had effects: stores 500 `route-failed`
   * for every retry, or keeps the operation `unknown`, as the route's
   * `onFailure` says, before the error goes on to the framework. Never throws.
   */
  fail(): Promise<void> {
    return this.failed(undefined);
  }

  private async failed(error: unknown): Promise<void> {
    if (!this.stop()) return;
    await this.storeFailure();
    this.end({ kind: 'threw', error });
  }

  private async storeFailure(): Promise<void> {
    const { config } = this;
    if (this.onFailure === 'unknown')
      return this.markUnknown('The route threw after it may have had effects; whether they happened is not known.');
    const detail =
      'The route failed after it may have had effects, and this key will not run it again. Check whether the operation took effect before you send it under a new key.';
    config.emit({
      type: 'finished',
      identity: this.lease.identity,
      mode: 'transparent',
      status: problemCatalogue['route-failed'].status,
      stored: true,
    });
    await this.complete(problemReply(problem('route-failed', detail), config.problemBase, config.describedBy));
  }

  private stop(): boolean {
    if (this.ended) return false;
    this.ended = true;
    this.keeper.stop();
    return true;
  }

  private complete(reply: Reply): Promise<boolean> {
    const { config, lease } = this;
    return this.write(() =>
      config.store.completeLease(lease, completionOf(reply, config.policy, config.retentionFor(lease.identity))),
    );
  }

  private async markUnknown(reason: string): Promise<void> {
    const { config, lease } = this;
    if (await this.write(() => config.store.markUnknown(lease, reason)))
      config.emit({ type: 'unknown', identity: lease.identity, reason });
  }

  /** Whether the conditional write landed. */
  private async write(conditional: () => Promise<boolean>): Promise<boolean> {
    const { config, lease } = this;
    try {
      if (await conditional()) return true;
      config.emit({ type: 'fenced', identity: lease.identity, attempt: lease.attempt });
    } catch (error) {
      // Not silent: the unrenewed lease runs out and the recovery worker marks the outcome unknown.
      config.emit({ type: 'store-error', identity: lease.identity, error });
    }
    return false;
  }
}

/** Header values as frameworks hold them: numbers, and arrays for repeated headers. */
export type CapturedHeaders = Readonly<Record<string, string | number | readonly string[] | undefined>>;

/** A route's answer as an adapter captured it, in the form the store keeps. */
export function capturedReply(status: number, headers: CapturedHeaders, body: Uint8Array): Reply {
  const kept: Record<string, HeaderValue> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) kept[name.toLowerCase()] = headerValue(typeof value === 'object' ? value : String(value));
  }
  return { status, headers: kept, body };
}
