import { defineConfig } from 'vitest/config';

/**
 * The files of `npm run test:long` (README), which CI runs after `npm test`: the SQL guard's fuzz run,
 * the rollup-against-raw sweeps over generated data, the text index's sweep of random multilingual
 * queries against the plain scan, the runaway queries the SQL deadline must kill
 * (each runs seconds on purpose), and the fault tests that stop stores or start, kill and restart real
 * server processes. `npm test` runs every other file.
 */
const LONG = [
  'test/sql/guard-fuzz.test.ts',
  'test/sql/deadline.test.ts',
  'test/widgets/rollup-equality.test.ts',
  'test/widgets/metadata-rollup.test.ts',
  'test/traces/text-index.test.ts',
  'test/faults/**/*.test.ts',
  'test/smoke/**/*.test.ts',
];

/**
 * Files of `npm test` that run each in a fresh fork (as every file did before): the SDK integrations set
 * process-wide OpenTelemetry state (global providers and context managers, patched client modules) that
 * the next file in a shared fork would inherit.
 */
const ISOLATED = ['test/integrations/**/*.test.ts'];

export default defineConfig({
  test: {
    // Forks, not threads: each fork is its own process and so gets its own embedded ClickHouse.
    pool: 'forks',
    // Three forks on two cores: a good part of the suite waits (on a browser, a killed query, a server
    // process starting), and a third fork fills those waits; measured 352 s with two, 310 s with three.
    maxWorkers: 3,
    // A fork runs its files one after another without restarting (isolate: false): Node, the server's
    // modules and the embedded engine load once per fork rather than once per file, which was most of
    // the suite's time. Each file still gets stores of its own: its harness opens a copy of one migrated,
    // empty data directory (support/global-setup.ts) and closes it in afterAll, before the next file opens
    // its own (the embedded ClickHouse allows one open data directory per process; docs/design.md).
    isolate: false,
    globalSetup: ['test/support/global-setup.ts'],
    // Fails a test whose public answers differ from the OpenAPI document (test/support/answers.ts).
    setupFiles: ['test/support/answer-check.ts'],
    reporters: ['default', './test/support/summary-reporter.ts'],
    testTimeout: 60_000,
    hookTimeout: 180_000,
    teardownTimeout: 30_000,
    // expect.poll waits for what a page or a worker does next (a chart drawn after its data query):
    // its 1 s default failed a browser test on a loaded machine. A wait bound, not a timing.
    expect: { poll: { timeout: 15_000 } },
    projects: [
      { extends: true, test: { name: 'main', include: ['test/**/*.test.ts'], exclude: [...LONG, ...ISOLATED] } },
      { extends: true, test: { name: 'main-isolated', include: ISOLATED, isolate: true } },
      // The fault tests start processes and servers of their own: each file in a fresh fork, as before.
      { extends: true, test: { name: 'long', include: LONG, isolate: true } },
    ],
  },
});
