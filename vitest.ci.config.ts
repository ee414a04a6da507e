import { defaultServerConditions } from 'vite';
import { defineConfig } from 'vitest/config';

// Tests import the package by its name; `retrysafe-source` points those imports at the TypeScript sources.
// The rest is Vitest's default: Vite's server conditions without `module`, which would hand Node bundler-only builds.
const conditions = ['retrysafe-source', ...defaultServerConditions.filter((condition) => condition !== 'module')];

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
