import { z } from 'zod';
import { Count } from '../answer-schemas.js';

/** The answers of public SQL (docs/sql.md). */

const Column = z.object({ name: z.string(), type: z.string() });

export const SqlSchemaAnswer = z.object({ tables: z.array(z.object({ name: z.string(), columns: z.array(Column) })) });

export const SqlAnswer = z.object({
  columns: z.array(Column),
  rows: z.array(z.array(z.unknown())),
  row_count: Count,
  truncated: z.boolean().describe('true when rows past the limit were left out'),
  elapsed_ms: z.number(),
});
