// The query limits live in src/query/limits.ts; this path stays for test/query-limits.test.ts.
export * from './query/limits.js';
