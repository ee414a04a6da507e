import { defaultServerConditions, type Plugin } from 'vite';
import { configDefaults, defineConfig } from 'vitest/config';

// Tests import the package by its name; `retrysafe-source` points those imports at the TypeScript sources.
// The rest is Vitest's default: Vite's server conditions without `module`, which would hand Node bundler-only builds.
export const conditions = [
  'retrysafe-source',
  ...defaultServerConditions.filter((condition) => condition !== 'module'),
];

export const processSuites = [
  'test/crash/**',
  'test/demo/**',
  'test/cli/**',
  'test/docs/runbook.test.ts',
  'test/console/console-browser.test.ts',
  'test/console/million-rows.test.ts',
  'test/retention/sweeper-plans.test.ts',
  'test/retention/hot-tombstones.test.ts',
  'examples/orders/test/**',
  'test/citus/**',
];

// Tests that open no database: they need neither the PostgreSQL server nor the PGlite template the
// database project's global setup builds, and so start in a second (`npm run test:unit`).
const unitTests = ['src/**/*.test.ts', 'test/architecture/**/*.test.ts'];

// A project's own `exclude` replaces the root's, and with it what `--exclude` added on the command line
// (.ci/faults.sh leaves three adapter files out that way): each project gets those patterns back.
const commandLineExclude: Plugin = {
  name: 'retrysafe:command-line-exclude',
  configureVitest({ vitest, project }) {
    project.config.exclude.push(...(vitest.config.cliExclude ?? []));
  },
};

export default defineConfig({
  plugins: [commandLineExclude],
  resolve: { conditions },
  ssr: { resolve: { conditions } },
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Files share their worker's modules rather than importing every framework and data layer anew, which took a
    // third of the run. Nothing of retrysafe's is per process but caches, so no file depends on running alone.
    isolate: false,
    // Most suites wait on databases, brokers and child processes rather than the CPU.
    maxWorkers: 3,
    projects: [
      { extends: true, test: { name: 'unit', include: unitTests } },
      {
        extends: true,
        test: {
          name: 'database',
          include: ['test/**/*.test.ts', 'examples/**/*.test.ts'],
          // Minutes each: `.ci/run` runs them with their own configs (clusters, a pooler, failover and killed
          // processes in test/faults; packed-package consumers in test/ci).
          // The crash matrices, the demo, the command line's and the service's process tests start and kill processes, the
          // console's and the sweeper's plans on a million rows take minutes to fill: `npm test`
          // leaves them to `.ci/run`, which sets RETRYSAFE_SUITES=all for its PostgreSQL 15 passes.
          exclude: [
            ...configDefaults.exclude,
            ...unitTests,
            'test/faults/**',
            'test/ci/**',
            ...(process.env.RETRYSAFE_SUITES === 'all' ? [] : processSuites),
          ],
          // Runs only when a file of this project is chosen: `vitest run --project unit` starts no server.
          globalSetup: ['test/support/global-setup.ts'],
        },
      },
      // Type tests (`expectTypeOf` in test/types/*.test-d.ts) are compiled, never run.
      {
        extends: true,
        test: {
          name: 'types',
          include: [],
          typecheck: { enabled: true, only: true, include: ['test/types/**/*.test-d.ts'] },
        },
      },
    ],
  },
});
