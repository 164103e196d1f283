import { defineConfig } from 'vitest/config';

// Forks, not threads: each fork is its own process and so gets its own embedded ClickHouse
// (chdb allows one data directory per process; docs/design.md, "Known traps").
export default defineConfig({
  test: {
    pool: 'forks',
    maxWorkers: 2,
    include: ['test/**/*.test.ts'],
    // Fails a test whose public answers differ from the OpenAPI document (test/support/answers.ts).
    setupFiles: ['test/support/answer-check.ts'],
    reporters: ['default', './test/support/summary-reporter.ts'],
    testTimeout: 60_000,
    hookTimeout: 180_000,
    teardownTimeout: 30_000,
  },
});
