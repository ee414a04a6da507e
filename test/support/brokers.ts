import { connect } from 'node:net';

/** A message broker the tests run against, from its environment variable or the local default. */
export interface Broker {
  readonly url: string;
  readonly reachable: boolean;
}

const known = {
  RabbitMQ: { variable: 'AMQP_URL', fallback: 'amqp://guest:guest@127.0.0.1:5672', port: 5672 },
  NATS: { variable: 'NATS_URL', fallback: 'nats://127.0.0.1:4222', port: 4222 },
} as const;

/**
 * Finds out whether a broker accepts connections. An unreachable broker skips
 * the suites that need it, with a message saying so, except with `CI=true`:
 * there it throws, so that the run fails instead of passing without them.
 */
export async function broker(name: keyof typeof known): Promise<Broker> {
  const { variable, fallback, port } = known[name];
  const url = process.env[variable] || fallback;
  const { hostname, port: given } = new URL(url);
  const problem = await tcpProblem(hostname, Number(given || port));
  if (problem === undefined) return { url, reachable: true };
  const message = `${name} is unreachable at ${hostname}:${given || port} (${problem}); set ${variable} to point at one.`;
  if (process.env.CI === 'true') throw new Error(`${message} CI=true: failing rather than skipping.`);
  console.warn(`${message} Skipping the ${name} tests.`);
  return { url, reachable: false };
}

function tcpProblem(host: string, port: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const socket = connect({ host, port, timeout: 3000 });
    socket.once('connect', () => {
      socket.destroy();
      resolve(undefined);
    });
    socket.once('timeout', () => {
      socket.destroy();
      resolve('no answer within 3 s');
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
  });
}
