import { defaultServerConditions } from 'vite';
import { defineConfig } from 'vitest/config';

// The slow suites `.ci/run` adds to `npm test`: the packed package in fresh projects, the demo.
export default defineConfig({
  // Tests import the package by its name; this condition points those imports at the TypeScript sources.
  resolve: { conditions: ['retrysafe-source', ...defaultServerConditions] },
  ssr: { resolve: { conditions: ['retrysafe-source', ...defaultServerConditions] } },
  test: {
    include: ['test/ci/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 300_000,
    hookTimeout: 600_000,
    pool: 'forks',
    maxWorkers: 1,
  },
});
