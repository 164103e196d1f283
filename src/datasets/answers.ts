import { z } from 'zod';
import { AnyJson, Count, DateTime, page } from '../answer-schemas.js';

/** The answers of the dataset routes (docs/datasets.md). */

const DatasetRecordAnswer = z.object({
  id: z.string(),
  dataset_id: z.string(),
  name: z.string(),
  description: z.string(),
  version_count: Count,
  created_at: DateTime,
  updated_at: DateTime,
});

export const DatasetListAnswer = page(DatasetRecordAnswer).meta({ id: 'DatasetList' });

/** A dataset with its versions (no test cases: those are read per version). */
export const DatasetDetailAnswer = DatasetRecordAnswer.extend({
  versions: z.array(
    z.object({
      id: z.string(),
      dataset_version_id: z.string(),
      version_number: Count,
      label: z.string(),
      test_case_count: Count,
      created_at: DateTime,
    }),
  ),
}).meta({ id: 'DatasetDetail' });

/** A test case (docs/datasets.md, "Versions and test cases"). Values are the caller's JSON, as sent. */
const TestCaseAnswer = z.object({
  test_case_id: z.string(),
  input: AnyJson,
  expected: AnyJson,
  metadata: AnyJson,
  source_trace_id: z.string().nullable(),
  source_span_id: z.string().nullable(),
});

/** A dataset version (docs/datasets.md, "Reading a version"): the immutable snapshot and the test cases of the page (or all). */
export const DatasetVersionAnswer = z
  .object({
    dataset_id: z.string(),
    dataset_version_id: z.string(),
    version_number: Count,
    label: z.string(),
    test_case_count: Count,
    created_at: DateTime,
    items: z.array(TestCaseAnswer),
    next_cursor: z
      .string()
      .nullable()
      .describe('opaque cursor for the next page; null on the last page and when not paged'),
  })
  // Inline in the document, not a named component: the answer is written as text (raw test case JSON),
  // and the document's test reads its required fields in place (test/http/openapi.test.ts).
  .describe('The version and its test cases: the page asked for, or (without limit and cursor) all of them, streamed');
