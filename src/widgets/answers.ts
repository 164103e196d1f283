import { z } from 'zod';
import { Count, DateTime } from '../answer-schemas.js';
import { DashboardFieldsAnswer } from '../dashboards/answers.js';
import { WIDGET_TYPES } from './vocabulary.js';

/** The answers of dashboard data and ad-hoc widget queries (docs/dashboards.md, "Dashboard data"). */

/** The answered window (docs/dashboards.md, "The window"). */
export const WindowAnswer = z
  .object({
    range: z
      .string()
      .nullable()
      .describe("the preset id the caller gave, or the default's; null when explicit bounds were used"),
    start_time: DateTime,
    end_time: DateTime,
    clamped: z.boolean().describe("true when the plan's retention pulled start_time forward"),
  })
  .meta({ id: 'AnsweredWindow' });

/** An answered widget (docs/dashboards.md, "Dashboard data"). */
export const AnsweredWidgetAnswer = z
  .object({
    id: z.string(),
    title: z.string(),
    type: z.enum(WIDGET_TYPES),
    status: z.enum(['ok', 'error', 'skipped']),
    columns: z.array(z.string()),
    rows: z.array(z.array(z.unknown())),
    meta: z.record(z.string(), z.unknown()),
    error: z.string(),
    truncated: z.boolean(),
  })
  .meta({ id: 'AnsweredWidget' });

export const DashboardDataAnswer = z
  .object({
    dashboard: DashboardFieldsAnswer,
    widgets: z.array(AnsweredWidgetAnswer),
    queried: Count,
    skipped: Count,
    failed: Count,
    window: WindowAnswer,
  })
  .meta({ id: 'DashboardData' });

/** `POST /widgets/query`: one spec answered like one answered widget, with its window. */
export const WidgetQueryAnswer = AnsweredWidgetAnswer.extend({ window: WindowAnswer }).meta({
  id: 'WidgetQueryResult',
});
