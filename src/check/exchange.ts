import { type Answer, answerLabel } from './answer.js';

/** A header as sent: the value is a byte string, one character per byte. */
export type HeaderLine = readonly [name: string, value: string];

/** One request the checker sends, on a connection of its own. */
export interface OutgoingRequest {
  readonly url: URL;
  readonly method: string;
  /** In order; a name given twice sends the header twice. */
  readonly headers: readonly HeaderLine[];
  readonly body?: Buffer;
  readonly timeoutMs: number;
  /** Give up this long after the request was fully written, as a client with a short time-out does. */
  readonly abandonAfterMs?: number;
  /** Close the connection once the last byte is written, as when the answer is lost on the way back (raw socket only). */
  readonly hangUp?: boolean;
  /** Aborts when the whole check's deadline passes. */
  readonly signal: AbortSignal;
}

/** Why a request got no answer. */
export type NoAnswer = 'timeout' | 'deadline' | 'budget' | 'transport';

/** What became of one request. */
export type Exchange =
  | { readonly kind: 'answered'; readonly answer: Answer }
  /** Given up on purpose after `abandonAfterMs`, or hung up once written; the server may still be working on it. */
  | { readonly kind: 'abandoned' }
  | { readonly kind: 'failed'; readonly reason: NoAnswer; readonly detail: string };

export function failed(reason: NoAnswer, detail: string): Exchange {
  return { kind: 'failed', reason, detail };
}

/** A failure of the connection, by its system code when it has one. */
export function transportFailure(error: unknown, signal: AbortSignal): Exchange {
  if (signal.aborted) return failed('deadline', 'the check deadline passed');
  const code = (error as { code?: unknown } | null)?.code;
  return failed('transport', typeof code === 'string' ? code : error instanceof Error ? error.message : String(error));
}

/** How an exchange is grouped in evidence: `201 replayed`, `no answer (timeout)`. */
export function exchangeLabel(exchange: Exchange): string {
  switch (exchange.kind) {
    case 'answered':
      return answerLabel(exchange.answer);
    case 'abandoned':
      return 'given up by the client';
    case 'failed':
      return `no answer (${exchange.reason === 'transport' ? exchange.detail : exchange.reason})`;
  }
}
