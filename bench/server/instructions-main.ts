/**
 * A server under valgrind for `bench/instructions.ts`: an IPC channel would
 * not cross valgrind, so it names its port in the file the parent gave it.
 */
import { writeFileSync } from 'node:fs';
import { appEnv } from './app-env.js';
import { apps, isAppName } from './apps/index.js';

const name = process.env.BENCH_APP ?? '';
if (!isAppName(name)) throw new Error(`unknown app ${name}`);
const app = await apps[name](appEnv());
const address = app.server.address();
writeFileSync(
  process.env.BENCH_PORT_FILE ?? '',
  String(typeof address === 'object' && address !== null ? address.port : 0),
);
