import { defineConfig } from 'vitest/config';

// The slow suites `.ci/run` adds to `npm test`: the packed package in fresh projects, the demo.
export default defineConfig({
  // As in vitest.config.ts: `retrysafe` imported by name resolves to src/.
  ssr: { resolve: { conditions: ['retrysafe-source'] } },
  test: {
    include: ['test/ci/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 300_000,
    hookTimeout: 600_000,
    pool: 'forks',
    maxWorkers: 1,
  },
});
