import { defineConfig } from 'vitest/config';

// `npm run test:chaos` and `npm run test:security` set AGENTQ_SUITE_SCALE=full: the suites run at the
// issue's full size and `*.full.test.ts` files join in. `npm test` runs the fast subset.
const full = process.env.AGENTQ_SUITE_SCALE === 'full';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: ['**/node_modules/**', 'test/cluster/**', ...(full ? [] : ['test/**/*.full.test.ts'])],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: full ? 20 * 60_000 : 60_000,
    hookTimeout: full ? 5 * 60_000 : 60_000,
    // Test files share one redis-server and two cores: a few at a time keeps timings honest.
    maxWorkers: 2,
  },
});
