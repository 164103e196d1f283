// The widget planner lives in src/query (span-plan.ts, series-steps.ts, measures.ts), where alerts
// build their queries too; this path stays for the tests and benches that import it.
export * from '../query/span-plan.js';
export * from '../query/series-steps.js';
