import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Test files share one redis-server and two cores: a few at a time keeps timings honest.
    maxWorkers: 2,
  },
});
