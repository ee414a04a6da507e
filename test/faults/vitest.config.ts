import { defineConfig } from 'vitest/config';
import { conditions } from '../../vitest.config.js';

/**
 * The fault suites: clusters, a pooler and service processes of their own,
 * killed, restarted and stalled. Run by `.ci/faults.sh`, which installs what
 * they need; kept out of `npm test` for their run time.
 */
export default defineConfig({
  // As in vitest.config.ts: `retrysafe` imported by name resolves to src/.
  resolve: { conditions },
  ssr: { resolve: { conditions } },
  test: {
    include: ['test/faults/**/*.test.ts'],
    globalSetup: ['test/faults/support/global-setup.ts'],
    testTimeout: 240_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // Each file runs several processes and a cluster or two; on two cores, one file at a time.
    maxWorkers: 1,
    fileParallelism: false,
  },
});
