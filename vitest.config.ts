import { defineConfig } from 'vitest/config';
import { suiteTimeouts } from './test/helpers/load-scale.js';
import { SuiteReporter } from './test/suite-reporter.js';

// `npm run test:chaos` and `npm run test:security` set AGENTQ_SUITE_SCALE=full: the suites run at their
// full size (test/helpers/suite-scale.ts) and get the longer timeouts. `npm test` runs the fast subset.
const full = process.env.AGENTQ_SUITE_SCALE === 'full';

// Processes are spawned from dist/ (global-setup-dist.ts rebuilds it when a source is newer), and every
// lane but unit shares a private redis-server started by global-setup.ts.
const withRedis = ['test/global-setup-dist.ts', 'test/global-setup.ts'];

/** One lane: a folder (or two) of test files, run with `npm run test:<name>` (docs/operations/tests.md). */
function lane(name: string, include: string[], globalSetup: string[] = withRedis) {
  return { extends: true as const, test: { name, include, globalSetup } };
}

export default defineConfig({
  test: {
    projects: [
      // Pure logic: no redis-server, no process, no build.
      lane('unit', ['test/unit/**/*.test.ts'], []),
      // A real redis-server; workers, API and clients in the test's own process.
      lane('integration', ['test/integration/**/*.test.ts', 'test/contract/**/*.test.ts']),
      // Spawned worker and CLI processes, `agentq start`, chromium.
      lane('e2e', ['test/e2e/**/*.test.ts']),
      lane('chaos', ['test/chaos/**/*.test.ts']),
      lane('security', ['test/security/**/*.test.ts']),
    ],
    ...suiteTimeouts(full),
    // Scaled by the machine's load as each file starts (test/setup-load-scale.ts).
    setupFiles: ['test/setup-load-scale.ts'],
    // Test files share one redis-server and two cores: two files at a time across all lanes keeps
    // timings honest.
    maxWorkers: 2,
    // What failed comes last, after the figures, so the tail of a CI log says it.
    reporters: ['default', new SuiteReporter()],
  },
});
