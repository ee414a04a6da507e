import { connect, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { engines } from '../../../test/support/engines.js';
import { useService } from '../testing/service.js';

const PROBLEMS = 'https://retrysafe.dev/examples/orders/problems/';
/** Far longer than every bound the service is given here: a connection still open then was never cut. */
const GIVE_UP_MS = 20_000;

/** What a raw connection received until the server closed it, or `undefined` if it stayed open for GIVE_UP_MS. */
function rawExchange(port: number, send: (socket: Socket) => void): Promise<string | undefined> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let received = '';
    const timer = setTimeout(() => {
      socket.destroy();
      resolve(undefined);
    }, GIVE_UP_MS);
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(received);
    });
    socket.on('connect', () => send(socket));
  });
}

/** Writes `text` one byte every `everyMs` while the socket is open. */
function trickle(socket: Socket, text: string, everyMs = 250): void {
  let i = 0;
  const tick = setInterval(() => {
    if (socket.destroyed || i >= text.length) return clearInterval(tick);
    socket.write(text[i++] ?? '');
  }, everyMs);
  socket.on('close', () => clearInterval(tick));
}

function expectProblemAnswer(raw: string | undefined, status: number, code: string): void {
  expect(raw, 'the server never closed the connection').toBeDefined();
  const [head = '', body = ''] = (raw ?? '').split('\r\n\r\n');
  expect(head.split('\r\n')[0]).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
  expect(head.toLowerCase()).toContain('content-type: application/problem+json');
  expect(JSON.parse(body)).toMatchObject({ type: `${PROBLEMS}${code}`, status });
}

describe.each(engines.slice(0, 1))('the server’s own limits on $name', (factory) => {
  const t = useService(factory, { serverTimeouts: { headersMs: 1_000, requestMs: 2_000, keepAliveMs: 1_000 } });
  const port = () => Number(new URL(t.service.url).port);

  it('cuts a client that trickles its headers, with 408 problem+json', async () => {
    const raw = await rawExchange(port(), (socket) =>
      trickle(socket, `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ${'a'.repeat(200)}\r\n\r\n`),
    );
    expectProblemAnswer(raw, 408, 'request-timeout');
  }, 30_000);

  it('cuts a client that trickles its body, with 408 problem+json', async () => {
    const raw = await rawExchange(port(), (socket) => {
      socket.write(
        'PUT /v1/carts/c1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer demo-a\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n',
      );
      trickle(socket, `{"items":[${' '.repeat(190)}]}`);
    });
    expectProblemAnswer(raw, 408, 'request-timeout');
  }, 30_000);

  it('closes an idle keep-alive connection', async () => {
    const raw = await rawExchange(port(), (socket) =>
      socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n'),
    );
    expect(raw).toMatch(/^HTTP\/1\.1 200 /);
  }, 30_000);

  it.each([
    ['a control character in a header', 'X-Bad: a\u0001b', 400, 'request-invalid'],
    ['a NUL in a header', 'X-Bad: a\u0000b', 400, 'request-invalid'],
    ['a 64 KiB header', `X-Big: ${'a'.repeat(64 * 1024)}`, 431, 'headers-too-large'],
  ])(
    'answers %s with problem+json',
    async (_name, line, status, code) => {
      const raw = await rawExchange(port(), (socket) =>
        socket.write(`GET /healthz HTTP/1.1\r\nHost: x\r\n${line}\r\n\r\n`),
      );
      expectProblemAnswer(raw, status, code);
    },
    30_000,
  );
});
