import { setTimeout as sleep } from 'node:timers/promises';
import { exited, forkTs, nextMessage } from './child-process.js';
import type { AppName } from './server/apps/index.js';
import { type ChildMessage, isChildMessage, type ParentMessage, type ProcessSample } from './server/messages.js';

/** A server under test in its own process. */
export interface ServerProcess {
  readonly url: string;
  readonly pid: number;
  sample(): Promise<ProcessSample>;
  /**
   * Waits (at most a few seconds) until no request is in flight and no
   * statement is being sent: a request whose client gave up still finishes
   * its transaction, and its round trips belong to the window that counted it.
   */
  settledSample(): Promise<ProcessSample>;
  profileStart(): Promise<void>;
  profileStop(file: string): Promise<void>;
  stop(): Promise<void>;
}

export interface ServerSettings {
  readonly databaseUrl: string;
  readonly redisUrl: string;
  readonly providerUrl: string | undefined;
  readonly poolSize: number;
  readonly tag: string;
  readonly logFile: string;
}

const SETTLE_MS = 5_000;

export async function startServer(app: AppName, settings: ServerSettings): Promise<ServerProcess> {
  const child = forkTs('./server/main.ts', {
    logFile: settings.logFile,
    env: {
      BENCH_APP: app,
      BENCH_APP_DATABASE_URL: settings.databaseUrl,
      BENCH_APP_REDIS_URL: settings.redisUrl,
      BENCH_APP_PROVIDER_URL: settings.providerUrl ?? '',
      BENCH_APP_POOL_SIZE: String(settings.poolSize),
      BENCH_APP_TAG: settings.tag,
    },
  });
  function ask<T>(message: ParentMessage, accept: (answer: ChildMessage) => T | undefined): Promise<T> {
    const answer = nextMessage(
      child,
      (received) => (isChildMessage(received) ? failedOr(received, accept) : undefined),
      30_000,
      settings.logFile,
    );
    child.send(message);
    return answer;
  }
  const sample = (): Promise<ProcessSample> =>
    ask({ type: 'sample' }, (answer) => (answer.type === 'sample' ? answer.sample : undefined));
  const profiled = (answer: ChildMessage): true | undefined => (answer.type === 'profiled' ? true : undefined);
  try {
    const port = await nextMessage(
      child,
      (message) =>
        isChildMessage(message) ? failedOr(message, (m) => (m.type === 'ready' ? m.port : undefined)) : undefined,
      30_000,
      settings.logFile,
    );
    return {
      url: `http://127.0.0.1:${port}`,
      pid: child.pid ?? 0,
      sample,
      async settledSample() {
        const deadline = Date.now() + SETTLE_MS;
        let previous: ProcessSample | undefined;
        let current = await sample();
        while (!settled(previous, current) && Date.now() < deadline) {
          await sleep(50);
          previous = current;
          current = await sample();
        }
        return current;
      },
      async profileStart() {
        await ask({ type: 'profile-start' }, profiled);
      },
      async profileStop(file) {
        await ask({ type: 'profile-stop', file }, profiled);
      },
      async stop() {
        if (child.connected) child.send({ type: 'stop' } satisfies ParentMessage);
        await exited(child, 15_000);
      },
    };
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
}

function settled(previous: ProcessSample | undefined, current: ProcessSample): boolean {
  return (
    previous !== undefined &&
    current.inFlight === 0 &&
    current.pgRoundTrips === previous.pgRoundTrips &&
    current.redisCommands === previous.redisCommands
  );
}

function failedOr<T>(message: ChildMessage, accept: (message: ChildMessage) => T | undefined): T | undefined {
  if (message.type === 'failed') throw new Error(message.message);
  return accept(message);
}
