import { defaultServerConditions } from 'vite';
import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  // Tests import the package by its name; this condition points those imports at the TypeScript sources.
  resolve: { conditions: ['retrysafe-source', ...defaultServerConditions] },
  ssr: { resolve: { conditions: ['retrysafe-source', ...defaultServerConditions] } },
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
