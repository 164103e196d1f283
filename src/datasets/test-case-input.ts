import { z } from 'zod';
import { RequestValidationError } from '../errors.js';
import { zodIssuesToValidation } from '../zod-issues.js';
import { StoredText } from '../edge-schemas.js';
import { RawJsonValue, type JsonPath, type RawJson } from '../raw-json.js';

/**
 * The request contract of `POST /datasets/{id}/versions` (docs/datasets.md): `{label?, test_cases:
 * [{input, expected, metadata?, source_trace_id?, source_span_id?}]}`, 1 to 10,000 cases. Pure.
 *
 * A case either brings its `input` (then `expected` is required too, and may be null) or names a
 * trace to copy from (`source_trace_id` without `input`; `expected` may still be given and wins over
 * the copied output). Unknown keys are ignored, as for spans. A version is all or nothing: one bad
 * case is a 422 for the request, located at `body.test_cases.<index>.<field>`.
 */

export const MAX_TEST_CASES_PER_VERSION = 10_000;
/** Whole request body of a version create: 10,000 cases of a few KB each. */
export const MAX_VERSION_BODY_BYTES = 64 * 1024 * 1024;

const SourceId = StoredText(1, 128);

export const TestCaseInput = z
  .object({
    input: RawJsonValue.optional(),
    expected: RawJsonValue.optional(),
    metadata: RawJsonValue.optional(),
    source_trace_id: SourceId.nullish(),
    source_span_id: SourceId.nullish(),
  })
  .superRefine((c, ctx) => {
    if (c.input === undefined && !c.source_trace_id) {
      ctx.addIssue({
        code: 'custom',
        path: ['input'],
        message: 'Field required: give input (with expected), or source_trace_id to copy them from a trace',
      });
    }
    if (c.input !== undefined && c.expected === undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['expected'],
        message: 'Field required when input is given (null is a value)',
      });
    if (c.source_span_id && !c.source_trace_id)
      ctx.addIssue({ code: 'custom', path: ['source_span_id'], message: 'source_span_id needs source_trace_id' });
  });
export type TestCaseInput = z.output<typeof TestCaseInput>;

export const VersionBody = z.object({
  label: StoredText(1, 200).nullish(),
  test_cases: z.array(z.unknown()).min(1),
});

/** Which values of a version body are kept as the caller's JSON text (raw-json.ts). */
export function keepsVersionValue(path: JsonPath): boolean {
  return (
    path.length === 3 &&
    path[0] === 'test_cases' &&
    typeof path[1] === 'number' &&
    (path[2] === 'input' || path[2] === 'expected' || path[2] === 'metadata')
  );
}

/** Every case checked; all issues of all cases in one 422. */
export function validateTestCases(raw: readonly unknown[]): TestCaseInput[] {
  const cases: TestCaseInput[] = [];
  const issues: z.core.$ZodIssue[] = [];
  raw.forEach((item, index) => {
    const result = TestCaseInput.safeParse(item);
    if (result.success) cases.push(result.data);
    else for (const issue of result.error.issues) issues.push({ ...issue, path: ['test_cases', index, ...issue.path] });
  });
  if (issues.length > 0)
    throw new RequestValidationError(zodIssuesToValidation('body', issues.slice(0, 100), { test_cases: raw }));
  return cases;
}

/** A case ready to store: input and expected resolved (given or copied), metadata as sent or absent. */
export type ResolvedCase = {
  input: RawJson;
  expected: RawJson;
  metadata: RawJson | null;
  sourceTraceId: string | null;
  sourceSpanId: string | null;
};
