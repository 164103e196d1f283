import { afterEach } from 'vitest';
import { takeAnswerMismatches } from './answers.js';

/**
 * A setup file of every test file (vitest.config.ts): a test fails when an answer it received from a
 * public route differs from the OpenAPI document (support/answers.ts).
 */
afterEach(() => {
  const mismatches = takeAnswerMismatches();
  if (mismatches.length) throw new Error(`answers that differ from the OpenAPI document:\n${mismatches.join('\n')}`);
});
