import { z } from 'zod';
import { Count } from '../answer-schemas.js';

/** The answers of public SQL (docs/sql.md). */

const Column = z.object({ name: z.string(), type: z.string() });

export const SqlSchemaAnswer = z
  .object({ tables: z.array(z.object({ name: z.string(), columns: z.array(Column) })) })
  .meta({ id: 'SqlSchema' });

export const SqlAnswer = z
  .object({
    columns: z.array(Column),
    rows: z.array(z.array(z.unknown())),
    row_count: Count,
    truncated: z.boolean().describe('true when rows past the limit were left out'),
    elapsed_ms: z.number(),
  })
  .meta({ id: 'SqlResult' });

/** The error answers of POST /sql that callers act on (docs/sql.md, "Limits", "Deadline", "Per-row cost"). */
export const SqlFailedAnswer = z
  .object({ detail: z.string() })
  .describe(
    'The query was refused by the guard (a construct, or a per-row cost rule: string distances, computed needles or LIKE patterns, ' +
      'amplifier sizes over their cap), failed, or hit a limit. At the time limit (SQL_TIME_LIMIT_SECONDS, 10 s) the answer comes at ' +
      'the limit, "query exceeded the time limit of 10 s; …", and the query is killed; it keeps its share until the engine stopped it.',
  )
  .meta({ id: 'SqlFailed' });
export const SqlBusyAnswer = z
  .object({ detail: z.string() })
  .describe(
    "The project's, workspace's or user's share of the SQL engine is taken and the queue is full, or no session freed within 15 s. " +
      'Comes with Retry-After.',
  )
  .meta({ id: 'SqlBusy' });
