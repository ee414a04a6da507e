import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  // The examples import retrysafe by name; this condition resolves it to src/ (package.json "exports"),
  // added to Vitest's own server conditions.
  ssr: { resolve: { conditions: ['retrysafe-source'] } },
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts', 'examples/**/*.test.ts'],
    // Minutes each: `.ci/run` runs them with their own configs (clusters, a pooler, failover and killed
    // processes in test/faults; packed-package consumers in test/ci).
    exclude: [...configDefaults.exclude, 'test/faults/**', 'test/ci/**'],
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Most suites wait on databases, brokers and child processes rather than the CPU.
    maxWorkers: 3,
  },
});
