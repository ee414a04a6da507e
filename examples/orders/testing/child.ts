import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../../', import.meta.url));

/** `npm start` as a real child process: `node --import tsx examples/orders/main.ts`. */
export interface ServiceProcess {
  readonly url: string;
  /** Everything it printed so far, for assertions and for diagnosing a failed start. */
  output(): string;
  /** Resolves with the exit code, or the signal that ended it. */
  readonly exited: Promise<number | NodeJS.Signals>;
  kill(signal: NodeJS.Signals): Promise<number | NodeJS.Signals>;
}

/** Starts the service with `env` on top of a clean environment and waits until /healthz answers 200. */
export async function startProcess(env: Readonly<Record<string, string>>, readyWithinMs = 90_000): Promise<ServiceProcess> {
  const port = await freePort();
  const service = wrap(spawnService({ PORT: String(port), HOST: '127.0.0.1', ...env }), `http://127.0.0.1:${port}`);
  const deadline = Date.now() + readyWithinMs;
  let running = true;
  void service.exited.then(() => (running = false));
  while (running && Date.now() < deadline) {
    if (await healthy(service.url)) return service;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  await service.kill('SIGKILL');
  throw new Error(`The service did not become healthy:\n${service.output()}`);
}

/** Runs the service to its end, for starts that are expected to fail. */
export async function runProcess(env: Readonly<Record<string, string>>): Promise<{ readonly code: number | NodeJS.Signals; readonly output: string }> {
  const service = wrap(spawnService(env), '');
  return { code: await service.exited, output: service.output() };
}

/** The service's own settings come from `env` only, never from the environment the tests run in. */
function spawnService(env: Readonly<Record<string, string>>): ChildProcess {
  const { DATABASE_URL: _url, DATA_DIR: _dir, RETRYSAFE_TOKENS: _tokens, RETRYSAFE_CRASH_AT: _crash, PORT: _port, HOST: _host, ...inherited } = process.env;
  return spawn(process.execPath, ['--import', 'tsx', 'examples/orders/main.ts'], { cwd: root, env: { ...inherited, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
}

function wrap(child: ChildProcess, url: string): ServiceProcess {
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const exited = new Promise<number | NodeJS.Signals>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? 'SIGKILL')));
  return {
    url,
    output: () => output,
    exited,
    kill(signal) {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

async function healthy(url: string): Promise<boolean> {
  try {
    const response = await fetch(`${url}/healthz`);
    return response.status === 200;
  } catch {
    return false;
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no free port'))));
    });
  });
}
