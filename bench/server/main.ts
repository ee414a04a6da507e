/**
 * A server under test, run as a child process so that its CPU time and
 * memory are its own. It names its port once listening, then answers the
 * parent's messages.
 */
import { appEnv } from './app-env.js';
import { apps, isAppName } from './apps/index.js';
import { CpuProfiler } from './cpu-profiler.js';
import { type ChildMessage, isParentMessage, type ParentMessage, type ProcessSample } from './messages.js';

const send = (message: ChildMessage): void => {
  process.send?.(message);
};

const name = process.env.BENCH_APP ?? '';
if (!isAppName(name)) {
  send({ type: 'failed', message: `unknown app ${name}` });
  process.exit(1);
}

const app = await apps[name](appEnv());
let requests = 0;
let inFlight = 0;
app.server.on('request', (_request, response) => {
  requests += 1;
  inFlight += 1;
  response.once('close', () => (inFlight -= 1));
});

function sample(): ProcessSample {
  const cpu = process.cpuUsage();
  return {
    cpuMicros: cpu.user + cpu.system,
    systemMicros: cpu.system,
    rssBytes: process.memoryUsage.rss(),
    maxRssBytes: process.resourceUsage().maxRSS * 1024,
    requests,
    pgRoundTrips: app.pgRoundTrips(),
    redisCommands: app.redisCommands(),
    inFlight,
  };
}

const profiler = new CpuProfiler();

async function answer(message: ParentMessage): Promise<void> {
  switch (message.type) {
    case 'sample':
      return send({ type: 'sample', sample: sample() });
    case 'profile-start':
      await profiler.start();
      return send({ type: 'profiled' });
    case 'profile-stop':
      await profiler.stop(message.file);
      return send({ type: 'profiled' });
    case 'stop':
      await app.close();
      process.exit(0);
  }
}

process.on('message', (message: unknown) => {
  if (!isParentMessage(message)) return;
  answer(message).catch((error: unknown) =>
    send({ type: 'failed', message: error instanceof Error ? error.message : String(error) }),
  );
});
process.on('disconnect', () => process.exit(0));

const address = app.server.address();
send({ type: 'ready', port: typeof address === 'object' && address !== null ? address.port : 0 });
