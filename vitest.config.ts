import { defineConfig } from 'vitest/config';
import { suiteTimeouts } from './test/helpers/load-scale.js';

// `npm run test:chaos` and `npm run test:security` set AGENTQ_SUITE_SCALE=full: the suites run at their
// full size (test/helpers/suite-scale.ts) and get the longer timeouts. `npm test` runs the fast subset.
const full = process.env.AGENTQ_SUITE_SCALE === 'full';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: ['**/node_modules/**', 'test/cluster/**'],
    // Workers and CLIs are spawned from dist/: global-setup-dist.ts rebuilds it when a source is newer.
    globalSetup: ['test/global-setup-dist.ts', 'test/global-setup.ts'],
    // Scaled by the machine's load as each file starts (test/setup-load-scale.ts).
    ...suiteTimeouts(full),
    setupFiles: ['test/setup-load-scale.ts'],
    // Test files share one redis-server and two cores: a few at a time keeps timings honest.
    maxWorkers: 2,
  },
});
