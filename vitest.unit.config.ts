import { defineConfig } from 'vitest/config';

// The inner loop (`npm run test:unit`): test/unit only, with no redis-server, no worker processes and no
// build of dist/ — pure logic, seconds to run. `npm test` runs these files too, with everything else.
export default defineConfig({
  test: {
    include: ['test/unit/**/*.test.ts'],
    maxWorkers: 2,
    setupFiles: ['test/setup-load-scale.ts'],
  },
});
