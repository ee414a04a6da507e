import type { ProbeName, Rule } from './check-report.js';

const IETF = 'IETF draft "The Idempotency-Key HTTP Header Field"';
const STRIPE = 'Stripe API reference, idempotent requests';
const KEYS_ARTICLE = 'article "Idempotency Keys: Designing APIs That Survive Retries"';
const DESIGN_ARTICLE = 'article "Idempotency: Designing APIs That Survive Retries"';

export const rules: Readonly<Record<ProbeName, Rule>> = {
  concurrency: {
    statement:
      'Concurrent requests with one key cause one effect; every other answer is the original or 409 with Retry-After.',
    sources: [KEYS_ARTICLE, IETF],
  },
  replay: {
    statement:
      'A retry after completion gets the stored status, body and headers such as Location; Stripe marks it Idempotent-Replayed: true.',
    sources: [STRIPE, DESIGN_ARTICLE],
  },
  'equivalent-body': {
    statement:
      'The same input written otherwise (object members in another order, other white space) is the same operation: its original answer, nothing run again, no 422.',
    sources: [DESIGN_ARTICLE],
  },
  mismatch: {
    statement: 'A key reused with a different request body is refused with 422 and runs nothing.',
    sources: [IETF, KEYS_ARTICLE],
  },
  'tenant-isolation': {
    statement:
      "The operation identity is (tenant, operation, key): another tenant's same key is a separate operation that never sees the first's response.",
    sources: [DESIGN_ARTICLE, KEYS_ARTICLE],
  },
  'bad-keys': {
    statement: 'A missing, empty, over-255-byte, non-ASCII or repeated key is refused with 400 before anything runs.',
    sources: [IETF, DESIGN_ARTICLE],
  },
  'slow-client': {
    statement:
      'A client that timed out retries with the same key until it gets the original outcome; the effect happens once.',
    sources: [KEYS_ARTICLE, DESIGN_ARTICLE],
  },
  'lost-response': {
    statement:
      'When the answer is lost after the work committed, a retry with the same key causes no second effect and gets the stored answer.',
    sources: [KEYS_ARTICLE, DESIGN_ARTICLE, IETF],
  },
  'other-principal': {
    statement:
      "Another user's retry with a user's key never gets that user's stored answer: it is refused or runs as its own operation.",
    sources: [DESIGN_ARTICLE, IETF],
  },
  'revoked-credential': {
    statement:
      'Authorisation is checked before a replay: a revoked credential is refused, never given the stored answer.',
    sources: [DESIGN_ARTICLE, IETF],
  },
  'expired-key': {
    statement:
      'A key past its retention gets the answer the endpoint documents for it, every time: never a second run behind it.',
    sources: [IETF, DESIGN_ARTICLE],
  },
  'published-specification': {
    statement:
      'The resource publishes its idempotency specification, expiry included; the Link rel="describedby" of its refusals leads to it.',
    sources: [IETF],
  },
};
