import { z } from 'zod';
import { AGGREGATIONS } from '../widgets/spec.js';
import { Count, DateTime, page } from '../answer-schemas.js';
import { ALERT_STATUSES, NO_DATA_MODES, OPERATORS, RENOTIFY_MODES, SEVERITIES, WINDOWS } from './schema.js';

/** The answers of the alert routes (docs/alerts.md). */

/** An alert (docs/alerts.md, "Definition"). Times that have not happened yet, and errors that never occurred, are null. */
export const AlertAnswer = z
  .object({
    id: z.string(),
    project_id: z.string(),
    name: z.string(),
    view: z.enum(['SPANS', 'SCORES']),
    score_name: z.string().nullable().describe('the SCORES view: the score whose values are measured; else null'),
    measure: z.string(),
    aggregation: z.enum(AGGREGATIONS),
    threshold: z.number(),
    threshold_operator: z.enum(OPERATORS),
    window: z.enum(Object.keys(WINDOWS) as [keyof typeof WINDOWS, ...(keyof typeof WINDOWS)[]]),
    filters: z
      .array(
        z.object({
          field: z.string(),
          op: z.string(),
          value: z.union([z.string(), z.number(), z.array(z.string())]).optional(),
          key: z.string().optional(),
        }),
      )
      .describe('row predicates the measure is evaluated over'),
    group_by: z.string().nullable(),
    no_data_mode: z.enum(NO_DATA_MODES),
    renotify: z.object({ mode: z.enum(RENOTIFY_MODES), interval_minutes: Count }),
    severity: z.enum(SEVERITIES),
    notify: z.object({ webhook_url: z.string() }).nullable(),
    status: z.enum(ALERT_STATUSES),
    creator: z.string().nullable(),
    create_time: DateTime,
    update_time: DateTime,
    alerted_at: DateTime.nullable(),
    severity_changed_at: DateTime.nullable(),
    last_evaluated_at: DateTime.nullable(),
    last_value: z.number().nullable(),
    last_error: z.string().nullable(),
    last_error_at: DateTime.nullable(),
    last_notify_at: DateTime.nullable(),
    last_notify_status: z.string().nullable(),
    last_notify_error: z.string().nullable(),
  })
  .meta({ id: 'Alert' });

/** `GET /alerts/{id}`: a grouped alert also lists its groups that are not quietly OK. */
export const AlertDetailAnswer = AlertAnswer.extend({
  groups: z
    .array(
      z.object({
        group: z.string(),
        status: z.string(),
        value: z.number().nullable(),
        alerted_at: DateTime.nullable(),
      }),
    )
    .optional(),
}).meta({ id: 'AlertDetail' });

export const AlertListAnswer = page(AlertAnswer).meta({ id: 'AlertList' });

/** `POST /alerts` (docs/alerts.md, "Routes"): `{alert, created}`; the webhook signing secret is shown only here. */
export const CreatedAlertAnswer = z
  .object({
    alert: AlertAnswer,
    created: z.literal(true),
    webhook_secret: z.string(),
  })
  .meta({ id: 'CreatedAlert' });

export const AlertEvaluationListAnswer = page(
  z.object({
    window_start: DateTime,
    window_end: DateTime,
    value: z.number().nullable(),
    state: z.string(),
    previous_state: z.string(),
    notified: z.boolean(),
    groups: z.unknown().describe('per-group outcomes of a grouped alert, else null'),
    error: z.string().nullable(),
    evaluated_at: DateTime,
  }),
).meta({ id: 'AlertEvaluationList' });
