import { createServer, type IncomingHttpHeaders } from 'node:http';
import { listen } from '../support/listen.js';

/** A request as the scripted server received it. */
export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  /** The `Idempotency-Key` header, as sent. */
  readonly key: string | undefined;
  readonly body: Buffer;
  /** `performance.now()` when the request arrived. */
  readonly receivedAt: number;
  /** Whether the client went away before an answer was sent. */
  abandoned: boolean;
}

export interface ScriptedReply {
  readonly status: number;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string;
}

/** What to answer; `hang` answers nothing and keeps the connection open. */
export type ScriptedAnswer = ScriptedReply | { readonly hang: true };

export interface ScriptedServer {
  readonly url: string;
  readonly requests: readonly RecordedRequest[];
  /** Forgets the requests recorded so far. */
  clear(): void;
  close(): Promise<void>;
}

/** A real HTTP server over TCP that answers each request as `script` says and records what it got. */
export async function startScriptedServer(
  script: (request: RecordedRequest, index: number) => ScriptedAnswer,
): Promise<ScriptedServer> {
  const requests: RecordedRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const key = req.headers['idempotency-key'];
      const recorded: RecordedRequest = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        key: Array.isArray(key) ? key.join(', ') : key,
        body: Buffer.concat(chunks),
        receivedAt: performance.now(),
        abandoned: false,
      };
      requests.push(recorded);
      res.on('close', () => {
        if (!res.writableFinished) recorded.abandoned = true;
      });
      const answer = script(recorded, requests.length - 1);
      if ('hang' in answer) return;
      res.writeHead(answer.status, answer.headers).end(answer.body);
    });
  });
  const listening = await listen(server);
  return {
    url: listening.url,
    requests,
    clear: () => {
      requests.length = 0;
    },
    close: listening.close,
  };
}

/** A problem+json answer, as retrysafe's server writes them. */
export function problemAnswer(
  status: number,
  code: string,
  extraHeaders: Readonly<Record<string, string>> = {},
): ScriptedReply {
  return {
    status,
    headers: { 'content-type': 'application/problem+json', ...extraHeaders },
    body: JSON.stringify({ type: `https://retrysafe.dev/problems/${code}`, title: code, status }),
  };
}
