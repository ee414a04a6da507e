import { defaultServerConditions } from 'vite';
import { configDefaults, defineConfig } from 'vitest/config';

// Tests import the package by its name; `retrysafe-source` points those imports at the TypeScript sources.
// The rest is Vitest's default: Vite's server conditions without `module`, which would hand Node bundler-only builds.
export const conditions = ['retrysafe-source', ...defaultServerConditions.filter((condition) => condition !== 'module')];

const processSuites = ['test/crash/**', 'test/demo/**', 'test/cli/**', 'test/console/console-browser.test.ts', 'examples/orders/test/**'];

export default defineConfig({
  resolve: { conditions },
  ssr: { resolve: { conditions } },
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts', 'examples/**/*.test.ts'],
    // Minutes each: `.ci/run` runs them with their own configs (clusters, a pooler, failover and killed
    // processes in test/faults; packed-package consumers in test/ci).
    // The crash matrices, the demo, the command line's and the service's process tests start and kill processes: `npm test`
    // leaves them to `.ci/run`, which sets RETRYSAFE_SUITES=all for its PostgreSQL 15 passes.
    exclude: [...configDefaults.exclude, 'test/faults/**', 'test/ci/**', ...(process.env.RETRYSAFE_SUITES === 'all' ? [] : processSuites)],
    // Type tests (`expectTypeOf` in test/types/*.test-d.ts) are compiled, never run.
    typecheck: { enabled: true, include: ['test/types/**/*.test-d.ts'] },
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Files share their worker's modules rather than importing every framework and data layer anew, which took a
    // third of the run. Nothing of retrysafe's is per process but caches, so no file depends on running alone.
    isolate: false,
    // Most suites wait on databases, brokers and child processes rather than the CPU.
    maxWorkers: 3,
  },
});
