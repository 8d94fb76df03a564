import { defineConfig } from 'vitest/config';

// `npm run test:cluster`: the suites under test/cluster start their own Redis Cluster (6 redis-servers on
// loopback) and stay out of `npm test`, which runs on one Redis.
export default defineConfig({
  test: {
    include: ['test/cluster/**/*.test.ts'],
    // The CLI runs from dist/: rebuilt first when a source is newer.
    globalSetup: ['test/global-setup-dist.ts'],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // One cluster at a time: 6 redis-servers per file on two shared cores.
    maxWorkers: 1,
  },
});
