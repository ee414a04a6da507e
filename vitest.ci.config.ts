import { defineConfig } from 'vitest/config';
import { conditions } from './vitest.config.js';

// The slow suites `.ci/run` adds to `npm test`: the packed package in fresh projects, the demo.
export default defineConfig({
  resolve: { conditions },
  ssr: { resolve: { conditions } },
  test: {
    include: ['test/ci/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 300_000,
    hookTimeout: 600_000,
    pool: 'forks',
    maxWorkers: 1,
  },
});
