import { type Answer, answerLabel, isBusinessDuplicate, isSuccess } from './answer.js';
import { type Exchange, exchangeLabel } from './exchange.js';
import type { Findings } from './findings.js';
import type { ProbeResult } from './check-report.js';

/** An operation the endpoint accepted: the key, the body and the first answer. */
export interface Operation {
  readonly key: string;
  /** The `{{uuid}}` of its body and count URL. */
  readonly uuid: string;
  readonly body: string;
  readonly original: Answer;
}

/** How an attempt to start a new operation turned out. */
export type Start =
  | { readonly kind: 'started'; readonly operation: Operation }
  /** 409 without Retry-After on a fresh key: the business input was already used. */
  | { readonly kind: 'business-duplicate'; readonly answer: Answer }
  /** No answer, or one that is neither a success nor a business duplicate. */
  | { readonly kind: 'refused'; readonly label: string };

export function classifyStart(key: string, uuid: string, body: string, exchange: Exchange): Start {
  if (exchange.kind !== 'answered') return { kind: 'refused', label: exchangeLabel(exchange) };
  const { answer } = exchange;
  if (isSuccess(answer)) return { kind: 'started', operation: { key, uuid, body, original: answer } };
  if (isBusinessDuplicate(answer)) return { kind: 'business-duplicate', answer };
  return { kind: 'refused', label: answerLabel(answer) };
}

export const BUSINESS_DUPLICATE_REASON =
  'the endpoint refused the body as a business duplicate (409 without Retry-After); give each operation its own input with {{uuid}}, or a body not used before';

/** The result of a probe that builds on an operation that was never started. */
export function withoutOperation(findings: Findings, start: Exclude<Start, { kind: 'started' }>): ProbeResult {
  if (start.kind === 'business-duplicate') return findings.notApplicable(BUSINESS_DUPLICATE_REASON);
  return findings.notApplicable(`no operation to build on: the concurrency probe's request got ${start.label}`);
}
