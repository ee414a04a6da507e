/**
 * The fake provider's ledger: which charges exist, which fencing tokens were
 * seen, and the rules a well-behaved idempotent downstream follows.
 *
 * Every method is synchronous, so in one Node process each call is atomic:
 * two requests with the same key can never both charge. When a state file is
 * given, every change is on disk (temp file, then rename) before the method
 * returns, so a charge that was made survives the provider being killed.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';

/** What a caller asks for. Two requests are "the same" when these are equal. */
export interface ChargeRequest {
  readonly amount_cents: number;
  readonly currency: string;
  readonly reference: string;
}

export interface Charge extends ChargeRequest {
  readonly id: string;
  readonly status: 'succeeded';
  readonly idempotency_key: string;
  readonly created_at: string;
}

/** Base of the provider's problem+json `type` URIs; a code is appended. */
export const problemTypeBase = 'https://payments.example/problems/';

export type ChargeOutcome =
  /** Money moved, just now. */
  | { readonly kind: 'created'; readonly charge: Charge }
  /** The key was seen with this same request: the earlier charge, nothing moved. */
  | { readonly kind: 'replayed'; readonly charge: Charge }
  /** The key was seen with a different request: refused, nothing moved. */
  | { readonly kind: 'key-reused'; readonly charge: Charge }
  /** A higher fencing token was already seen for the key: refused, nothing moved. */
  | { readonly kind: 'stale-token'; readonly highest: number };

/** The file format of `stateFile`. */
interface SavedState {
  readonly charges: Charge[];
  readonly fencing: Record<string, number>;
}

export class ChargeBook {
  readonly #stateFile: string | undefined;
  #charges: Charge[] = [];
  #byKey = new Map<string, Charge>();
  #fencing = new Map<string, number>();
  #requests = 0;

  /** A book kept in memory, and in `stateFile` (loaded if it exists) when given. */
  constructor(stateFile?: string) {
    this.#stateFile = stateFile;
    if (stateFile !== undefined && existsSync(stateFile)) {
      const saved = JSON.parse(readFileSync(stateFile, 'utf8')) as SavedState;
      this.#charges = saved.charges;
      this.#fencing = new Map(Object.entries(saved.fencing));
      for (const charge of saved.charges) this.#byKey.set(charge.idempotency_key, charge);
    }
  }

  /**
   * Charges once per key. The fencing check comes first: a request from a
   * holder whose lease was taken over is refused even if it would only replay.
   */
  charge(key: string, request: ChargeRequest, fencingToken?: number): ChargeOutcome {
    let changed = false;
    if (fencingToken !== undefined) {
      const highest = this.#fencing.get(key);
      if (highest !== undefined && fencingToken < highest) return { kind: 'stale-token', highest };
      if (highest === undefined || fencingToken > highest) {
        this.#fencing.set(key, fencingToken);
        changed = true;
      }
    }
    const existing = this.#byKey.get(key);
    if (existing !== undefined) {
      if (changed) this.#save();
      return sameRequest(existing, request)
        ? { kind: 'replayed', charge: existing }
        : { kind: 'key-reused', charge: existing };
    }
    const charge: Charge = {
      id: `ch_${randomBytes(12).toString('hex')}`,
      amount_cents: request.amount_cents,
      currency: request.currency,
      reference: request.reference,
      status: 'succeeded',
      idempotency_key: key,
      created_at: new Date().toISOString(),
    };
    this.#charges.push(charge);
    this.#byKey.set(key, charge);
    this.#save();
    return { kind: 'created', charge };
  }

  lookup(key: string): Charge | undefined {
    return this.#byKey.get(key);
  }

  /** How many times money moved for `key`. A provider that honours keys never exceeds 1. */
  count(key: string): number {
    return this.#charges.filter((c) => c.idempotency_key === key).length;
  }

  /** Counts a charge request, valid or not. Kept in memory only: requests since this process started. */
  noteRequest(): void {
    this.#requests += 1;
  }

  stats(): { charges: number; requests: number } {
    return { charges: this.#charges.length, requests: this.#requests };
  }

  /** Forgets every charge, token and request count. */
  clear(): void {
    this.#charges = [];
    this.#byKey.clear();
    this.#fencing.clear();
    this.#requests = 0;
    this.#save();
  }

  #save(): void {
    if (this.#stateFile === undefined) return;
    const saved: SavedState = { charges: this.#charges, fencing: Object.fromEntries(this.#fencing) };
    const temp = `${this.#stateFile}.${process.pid}.tmp`;
    writeFileSync(temp, JSON.stringify(saved, null, 2));
    renameSync(temp, this.#stateFile);
  }
}

function sameRequest(charge: Charge, request: ChargeRequest): boolean {
  return (
    charge.amount_cents === request.amount_cents &&
    charge.currency === request.currency &&
    charge.reference === request.reference
  );
}

/** Reads a charge request body, or says what is wrong with it. */
export function parseChargeRequest(body: unknown): ChargeRequest | string {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return 'body must be a JSON object';
  const { amount_cents, currency, reference } = body as Record<string, unknown>;
  if (typeof amount_cents !== 'number' || !Number.isSafeInteger(amount_cents) || amount_cents <= 0) {
    return 'amount_cents must be an integer greater than 0';
  }
  if (typeof currency !== 'string' || !/^[A-Z]{3}$/.test(currency))
    return 'currency must be an ISO 4217 code such as "EUR"';
  if (typeof reference !== 'string' || reference === '') return 'reference must be a non-empty string';
  return { amount_cents, currency, reference };
}
