import type { ClientTracing } from './client-tracing.js';
import type { AttemptResult } from './attempt.js';
import type { ReplayableRequest } from './replayable-request.js';

/**
 * Sends one attempt inside an HTTP client span, as OpenTelemetry's HTTP
 * conventions describe it: one span per attempt, named after the method,
 * with `http.request.resend_count` on every attempt after the first. The URL
 * is recorded without its query string, which may carry data.
 */
export function inAttemptSpan(
  tracing: ClientTracing | undefined,
  request: ReplayableRequest,
  attempt: number,
  send: () => Promise<AttemptResult>,
): Promise<AttemptResult> {
  if (tracing === undefined) return send();
  const url = new URL(request.url);
  const attributes = {
    'http.request.method': request.method,
    'server.address': url.hostname,
    'server.port': Number(url.port || (url.protocol === 'https:' ? 443 : 80)),
    'url.full': `${url.origin}${url.pathname}`,
    ...(attempt > 1 ? { 'http.request.resend_count': attempt - 1 } : {}),
  };
  return tracing.active(request.method, 'client', attributes, async (span) => {
    const result = await send();
    if (result.kind === 'answered') {
      const { status } = result.response;
      span.setAttributes({
        'http.response.status_code': status,
        'retrysafe.replayed': result.response.headers.get('idempotent-replayed') === 'true',
      });
      // The conventions mark a client span failed from 400 on, with the status as error.type.
      if (status >= 400) span.fail({ code: String(status) });
    } else if (result.kind === 'failed') {
      span.fail({ code: result.reason });
    }
    return result;
  });
}
