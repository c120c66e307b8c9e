import { defineConfig } from 'vitest/config';

// Forks, not threads: tests that touch the addon load llama.cpp, which must not share a process
// with a worker that gets torn down mid-call.
export default defineConfig({
  test: {
    pool: 'forks',
    include: ['test/**/*.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 300_000,
    maxWorkers: 2,
  },
});
