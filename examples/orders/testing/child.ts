import { type ChildProcess, spawn, type SpawnOptions } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { freePort } from '../../../test/support/free-port.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));

/** `npm start` as a real child process: `node --conditions=retrysafe-source --import tsx examples/orders/main.ts`. */
export interface ServiceProcess {
  readonly url: string;
  /** Everything it printed so far, for assertions and for diagnosing a failed start. */
  output(): string;
  /** Resolves with the exit code, or the signal that ended it. */
  readonly exited: Promise<number | NodeJS.Signals>;
  /** The process started: `node`, or `npm` leading its process group. */
  readonly pid: number;
  kill(signal: NodeJS.Signals): Promise<number | NodeJS.Signals>;
}

/**
 * How the service is started: `node` runs it as the tests usually do; `npm`
 * runs `npm start` as a user would, in a process group of its own, so that a
 * test can tell whether anything it started outlives it.
 */
export type Launch = 'node' | 'npm';

export interface StartOptions {
  readonly launch?: Launch;
  /** `healthy` (the default): banner printed and /healthz 200; `listening`: /healthz answers at all (the database may be down). */
  readonly until?: 'healthy' | 'listening';
}

/** Starts the service with `env` on top of a clean environment and waits until it is ready as `options.until` says. */
export async function startProcess(
  env: Readonly<Record<string, string>>,
  readyWithinMs = 90_000,
  options: StartOptions = {},
): Promise<ServiceProcess> {
  const { launch = 'node', until = 'healthy' } = options;
  const port = await freePort();
  const service = wrap(
    spawnService({ PORT: String(port), HOST: '127.0.0.1', ...env }, launch),
    `http://127.0.0.1:${port}`,
  );
  const deadline = Date.now() + readyWithinMs;
  let running = true;
  void service.exited.then(() => (running = false));
  while (running && Date.now() < deadline) {
    const status = await healthStatus(service.url);
    if (
      until === 'listening'
        ? status !== undefined
        : status === 200 && service.output().includes(`orders service listening on ${service.url}`)
    )
      return service;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  await service.kill('SIGKILL');
  throw new Error(`The service did not become healthy:\n${service.output()}`);
}

/** Runs the service to its end, for starts that are expected to fail. */
export async function runProcess(
  env: Readonly<Record<string, string>>,
): Promise<{ readonly code: number | NodeJS.Signals; readonly output: string }> {
  const service = wrap(spawnService(env), '');
  return { code: await service.exited, output: service.output() };
}

/** Every variable the service reads (README.md), plus the crash switch. */
const SETTINGS: ReadonlySet<string> = new Set([
  'PORT',
  'HOST',
  'DATABASE_URL',
  'DATABASE_POOLER',
  'DATA_DIR',
  'RETRYSAFE_TOKENS',
  'RETRYSAFE_CRASH_AT',
  'PROVIDER_URL',
  'PROVIDER_WEBHOOK_SECRET',
  'AMQP_URL',
  'AMQP_EXCHANGE',
  'AMQP_QUEUE',
  'NATS_URL',
  'NATS_STREAM',
  'NATS_CONSUMER',
]);

/** The service's own settings come from `env` only, never from the environment the tests run in. */
function spawnService(env: Readonly<Record<string, string>>, launch: Launch = 'node'): ChildProcess {
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !SETTINGS.has(name)));
  const options: SpawnOptions = { cwd: root, env: { ...inherited, ...env }, stdio: ['ignore', 'pipe', 'pipe'] };
  if (launch === 'npm') return spawn('npm', ['start', '--silent'], { ...options, detached: true });
  return spawn(
    process.execPath,
    ['--conditions=retrysafe-source', '--import', 'tsx', 'examples/orders/main.ts'],
    options,
  );
}

/** Whether any process is left in the group `pid` leads (a child started with `detached: true`). */
export function groupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}

function wrap(child: ChildProcess, url: string): ServiceProcess {
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const exited = new Promise<number | NodeJS.Signals>((resolve) =>
    child.once('exit', (code, signal) => resolve(code ?? signal ?? 'SIGKILL')),
  );
  return {
    url,
    output: () => output,
    exited,
    pid: child.pid ?? -1,
    kill(signal) {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

async function healthStatus(url: string): Promise<number | undefined> {
  try {
    return (await fetch(`${url}/healthz`)).status;
  } catch {
    return undefined;
  }
}
