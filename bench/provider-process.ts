import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { repoRoot, supervise } from './child-process.js';

/** The fake payment provider in its own process, so its CPU is neither the client's nor the server's. */
export interface ProviderProcess {
  readonly url: string;
  stop(): Promise<void>;
}

export async function startProvider(): Promise<ProviderProcess> {
  const child = supervise(
    spawn(process.execPath, ['--conditions=retrysafe-source', '--import', 'tsx', 'examples/provider/main.ts'], {
      cwd: repoRoot,
      env: { ...process.env, PORT: '0' },
      stdio: ['ignore', 'pipe', 'inherit'],
    }),
  );
  const lines = createInterface({ input: child.stdout });
  const exit = once(child, 'exit').then(() => {
    throw new Error('the payment provider exited before it listened');
  });
  const listening = (async () => {
    for await (const line of lines) {
      const match = /provider listening at (\S+)/.exec(line);
      if (match?.[1] !== undefined) return match[1];
    }
    throw new Error('the payment provider closed its output before it listened');
  })();
  const url = await Promise.race([listening, exit]);
  return {
    url,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await exited;
    },
  };
}
